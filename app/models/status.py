"""What is on disk for each downloadable model, for `hanasu models list` and the model manager.

Unlike resolve(), this never raises for a broken file: it reports it, so a listing always works.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.models.catalog import ModelEntry
from app.models.checks import check_entry
from app.models.errors import ModelError
from app.models.resolve import entry_root, is_present, search_dirs

State = Literal["present", "missing", "incomplete", "broken"]


@dataclass(frozen=True)
class EntryStatus:
    """A downloadable entry's state; `root` is where it was found (or would be downloaded)."""

    entry: ModelEntry
    state: State
    root: Path
    detail: str = ""


def entry_status(
    entry: ModelEntry, *, models_dir: Path | None = None, data_dir: Path | None = None
) -> EntryStatus:
    """Look for the entry in the searched folders and judge the first copy found."""
    dirs = [base for _, base in search_dirs(models_dir, data_dir)]
    for base in dirs:
        root = entry_root(entry, base)
        if is_present(entry, base):
            try:
                check_entry(entry, root)
            except ModelError as exc:
                state: State = "incomplete" if "incomplete" in str(exc) else "broken"
                return EntryStatus(entry, state, root, str(exc))
            return EntryStatus(entry, "present", root)
        if any((root / (f.name + ".part")).exists() for f in entry.files):
            return EntryStatus(
                entry, "incomplete", root, "partial download; run it again to resume"
            )
    return EntryStatus(entry, "missing", entry_root(entry, dirs[-1]))
