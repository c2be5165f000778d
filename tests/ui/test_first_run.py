"""The first-run page: shown once, says what runs now and what to download, downloads in one
click with speed and time left, stops and resumes, and never blocks the window."""

from __future__ import annotations

import importlib
import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from app.models.catalog import ModelEntry
from app.models.errors import DownloadCancelled, ModelError
from app.storage.settings import Settings
from app.ui import first_run
from app.ui.first_run import WelcomeDialog, should_welcome
from app.ui.main import _welcome
from app.ui.theme import apply_theme
from app.ui.tier_panel import download_stopped
from app.ui.window import MainWindow
from tests.ui.tiers_support import MACHINES, _report

SHOTS = Path(__file__).parent / "screenshots"
# the module (app.models re-exports its `download` function under the same name)
download_module = importlib.import_module("app.models.download")
FakeDownload = Callable[..., Path]


def _welcome_page(qtbot: QtBot, settings: Settings | None = None,
                  clock: Callable[[], float] | None = None) -> WelcomeDialog:
    current = settings or Settings()
    page = WelcomeDialog(lambda: current, gather_now=False, clock=clock or time.monotonic)
    qtbot.addWidget(page)
    page.show_report(_report())
    page.show()
    return page


def test_only_the_very_first_launch_is_welcomed() -> None:
    assert should_welcome(Settings(), had_settings_file=False)
    assert not should_welcome(Settings(), had_settings_file=True)  # an earlier user
    assert not should_welcome(Settings(welcomed=True), had_settings_file=False)


def test_what_runs_now_and_what_to_download(qtbot: QtBot) -> None:
    page = _welcome_page(qtbot)
    assert not page.isModal()
    assert "SmolLM2 135M" in first_run.RUNNING_NOW
    assert page.recommendation.text() == (
        "Recommended for this machine: 15 GB RAM, 8 cores, no GPU: Gemma 4 E4B on the CPU, "
        "about 3.5 s to the first word")
    detail = page.detail.text()
    assert "Gemma 4 E4B instruct, Q4_K_M" in detail and "Whisper small" in detail
    assert "5.9 GB, about 16 min at 50 Mbit/s" in detail
    assert page.download_button.isVisible() and page.download_button.text() == "Download 5.9 GB"
    assert page.later_button.text() == "Not now"


def test_an_unused_gpu_and_its_fix_stand_apart_and_can_be_copied(qtbot: QtBot) -> None:
    page = WelcomeDialog(Settings, gather_now=False)
    qtbot.addWidget(page)
    page.show_report(_report(MACHINES["rtx3060-cpu-only-binding"]))
    page.show()
    assert page.detail.text().startswith("To download: Gemma 4 26B-A4B")
    assert "CPU-only" not in page.detail.text()
    assert page.warnings.isVisible() and "GGML_CUDA=on" in page.warnings.text()
    assert page.warnings.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    assert not _welcome_page(qtbot).warnings.isVisible()  # the laptop has nothing to fix


def test_a_blocked_hub_points_to_the_mirror(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    def blocked(entry: ModelEntry, **_: Any) -> Path:
        raise ModelError("cannot reach the model hub for https://huggingface.co/x: timed out")

    monkeypatch.setattr(download_module, "download", blocked)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    page = _welcome_page(qtbot)
    page.download_button.click()
    qtbot.waitUntil(lambda: not page.downloading, timeout=5_000)
    assert page.status.text().startswith("Download stopped: cannot reach the model hub")
    assert "set a download mirror in Models (or HF_ENDPOINT), then resume." in page.status.text()
    assert page.download_button.text() == "Resume download"
    assert download_stopped("cannot reach the model hub for x", "https://m", "here") == (
        "Download stopped: cannot reach the model hub for x")  # a mirror is set already


def _fake(calls: list[tuple[str, str | None]], wait: threading.Event | None = None
          ) -> FakeDownload:
    def fake(entry: ModelEntry, *, progress: Callable[[int, int], None],
             cancel: threading.Event, endpoint: str | None = None, **_: Any) -> Path:
        progress(1, 2)
        if wait is not None and not wait.is_set():
            cancel.wait(10)
            raise DownloadCancelled("download cancelled; run it again to resume")
        calls.append((entry.variant, endpoint))
        return Path("/models") / entry.main
    return fake


def test_one_click_downloads_the_tier_through_the_mirror(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, str | None]] = []
    monkeypatch.setattr(download_module, "download", _fake(calls))
    page = _welcome_page(qtbot, Settings(model_endpoint="https://hf-mirror.com"))
    page.download_button.click()
    qtbot.waitUntil(lambda: not page.downloading, timeout=5_000)
    assert calls == [("e4b", "https://hf-mirror.com"), ("small", "https://hf-mirror.com"),
                     ("production", None)]  # Kokoro comes from its own URL, not the hub
    assert page.status.text().startswith("Downloaded.")
    assert not page.download_button.isVisible() and page.later_button.text() == "Close"


def test_stop_keeps_it_resumable(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str | None]] = []
    second_try = threading.Event()
    monkeypatch.setattr(download_module, "download", _fake(calls, second_try))
    page = _welcome_page(qtbot)
    page.download_button.click()
    qtbot.waitUntil(lambda: " of " in page.status.text(), timeout=5_000)
    page.stop_button.click()
    qtbot.waitUntil(lambda: not page.downloading, timeout=5_000)
    assert "cancelled" in page.status.text()
    assert page.download_button.isVisible()
    assert page.download_button.text() == "Resume download"
    second_try.set()
    page.download_button.click()
    qtbot.waitUntil(lambda: not page.downloading, timeout=5_000)
    assert [v for v, _ in calls] == ["e4b", "small", "production"]


def test_the_download_line_and_buttons_stay_inside_the_page(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, str | None]] = []
    release = threading.Event()
    monkeypatch.setattr(download_module, "download", _fake(calls, release))
    page = _welcome_page(qtbot)
    qtbot.wait(20)
    page.download_button.click()
    qtbot.waitUntil(lambda: " of " in page.status.text(), timeout=5_000)
    qtbot.wait(20)  # let the layout settle
    for widget in (page.status, page.progress, page.stop_button):
        assert widget.isVisible()
        assert widget.geometry().bottom() < page.height(), widget
    assert page.status.height() >= page.status.heightForWidth(page.status.width())
    page.stop_button.click()
    qtbot.waitUntil(lambda: not page.downloading, timeout=5_000)
    assert page.download_button.geometry().bottom() < page.height()


def test_speed_and_time_left_are_measured(qtbot: QtBot) -> None:
    ticks = itertools.count(0.0, 10.0)
    page = _welcome_page(qtbot, clock=lambda: next(ticks))
    page._started_bytes = -1
    page._progress((1_000_000_000, 5_000_000_000))  # a resumed part: the start point
    page._progress((2_000_000_000, 5_000_000_000))  # 1 GB in 10 s
    assert page.status.text() == "2.0 GB of 5.0 GB · 100.0 MB/s · about 30 s left"


def test_the_window_welcomes_once(
    qtbot: QtBot, window: MainWindow, saved: list[Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(first_run, "gather", lambda _report=None: _report_now())
    _welcome(window, had_settings=True)
    assert window.findChildren(WelcomeDialog) == []
    _welcome(window, had_settings=False)
    pages = window.findChildren(WelcomeDialog)
    assert len(pages) == 1 and pages[0].isVisible() and not pages[0].isModal()
    assert window.settings.welcomed
    qtbot.waitUntil(lambda: bool(saved) and saved[-1].welcomed, timeout=5_000)
    qtbot.waitUntil(lambda: pages[0].download_button.isVisible(), timeout=5_000)
    _welcome(window, had_settings=False)  # welcomed now: never again
    assert len(window.findChildren(WelcomeDialog)) == 1
    pages[0].close()


def _report_now() -> Any:
    return _report()


def test_screenshot(qtbot: QtBot) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app)
    page = _welcome_page(qtbot)
    page.resize(560, page.sizeHint().height())
    qtbot.wait(20)  # let the layout settle (runs the event loop)
    SHOTS.mkdir(exist_ok=True)
    platform = QGuiApplication.platformName()
    assert page.grab().save(str(SHOTS / f"first-run-{platform}.png"))


@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_screenshot_on_each_machine_shows_all_its_text(qtbot: QtBot, machine: str) -> None:
    """As the app opens it: shown first, the recommendation arrives later; nothing clipped."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app)
    page = WelcomeDialog(Settings, gather_now=False)
    qtbot.addWidget(page)
    page.show()
    qtbot.wait(20)
    page.show_report(_report(MACHINES[machine]))
    qtbot.wait(50)  # let the layout settle (runs the event loop)
    SHOTS.mkdir(exist_ok=True)
    platform = QGuiApplication.platformName()
    assert page.grab().save(str(SHOTS / f"first-run-{machine}-{platform}.png"))
    for label in page.findChildren(QLabel):
        if label.isVisible() and label.wordWrap():
            assert label.height() >= label.heightForWidth(label.width()), label.text()
            assert label.geometry().bottom() <= page.height(), label.text()
    screen = page.screen().availableGeometry()
    assert page.width() <= max(640, screen.width())
    nothing_to_get = MACHINES[machine].cores() <= 2  # the built-in models are its best
    assert page.download_button.isVisible() is not nothing_to_get
    assert (page.later_button.text() == "Start talking") is nothing_to_get
