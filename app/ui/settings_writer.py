"""Writes the window's settings off the GUI thread (each write fsyncs), in order, one at a
time; a failure is logged and posted to the window as a notice."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from app.storage.settings import Settings
from app.ui.notices import Notice

log = logging.getLogger(__name__)

SaveSettings = Callable[[Settings], None]
Post = Callable[[object], None]


class SettingsWriter:
    def __init__(self, save: SaveSettings | None, post: Post) -> None:
        self._save = save
        self._post = post
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="settings-save")

    def submit(self, settings: Settings) -> None:
        if self._save is not None:
            self._pool.submit(_save_quietly, self._save, settings, self._post)

    def shutdown(self) -> None:
        """Finish the pending writes."""
        self._pool.shutdown(wait=True)


def _save_quietly(save: SaveSettings, settings: Settings, post: Post) -> None:
    """Runs on the single writer thread (so saves stay in order)."""
    try:
        save(settings)
    except Exception as exc:
        log.warning("could not save settings: %s", exc)
        post(Notice(f"Your settings could not be saved: {exc}"))
