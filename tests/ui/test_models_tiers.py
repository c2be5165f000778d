"""The Models dialog recommends a tier and says why, lets the user pick another (saved), fetches a
tier in one click, takes a mirror, and never squashes a label (which clipped "Q4_K_M")."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from app.gpu import Gpu
from app.models.catalog import ModelEntry
from app.storage.settings import Settings
from app.ui import models_dialog
from app.ui.dialogs import DialogLauncher
from app.ui.model_info import ModelsReport
from app.ui.models_dialog import ModelsDialog
from app.ui.session import Session
from app.ui.tasks import Report
from app.ui.theme import apply_theme
from app.ui.window import MainWindow
from tests.ui.tiers_support import MACHINES, Laptop, _report

GIB = 1 << 30
SHOTS = Path(__file__).parent / "screenshots"


def _dialog(qtbot: QtBot, settings: Settings | None = None,
            saved: list[Settings] | None = None) -> ModelsDialog:
    dialog = ModelsDialog(gather_now=False, settings=settings,
                          on_settings=saved.append if saved is not None else None)
    qtbot.addWidget(dialog)
    dialog.show_report(_report())
    dialog.show()
    return dialog


def _llm_text(dialog: ModelsDialog) -> str:
    return dialog.rows[0].state.text()


def test_recommendation_and_why(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    panel = dialog.panel
    assert panel is not None
    assert panel.reason.text() == ("15 GB RAM, 8 cores, no GPU: Gemma 4 E4B on the CPU, "
                                   "about 3.5 s to the first word")
    assert panel.chosen == "cpu-medium"
    assert "(recommended)" in panel.tiers.currentText()
    assert "Gemma 4 E4B instruct, Q4_K_M" in _llm_text(dialog)
    assert "Whisper small" in dialog.rows[1].state.text()
    assert panel.download_button.isVisible()
    assert panel.download_button.text() == "Download 5.9 GB"


def test_an_unusable_gpu_is_said_with_the_fix(qtbot: QtBot) -> None:
    dialog = ModelsDialog(gather_now=False)
    qtbot.addWidget(dialog)
    dialog.show_report(_report(Laptop(Gpu("NVIDIA GeForce RTX 3060", 12 * GIB))))
    assert dialog.panel is not None
    assert "CPU-only build" in dialog.panel.warnings.text()
    assert "GGML_CUDA=on" in dialog.panel.warnings.text()


def test_override_is_saved_and_shows_that_tier(qtbot: QtBot) -> None:
    saved: list[Settings] = []
    dialog = _dialog(qtbot, saved=saved)
    panel = dialog.panel
    assert panel is not None
    panel.tiers.setCurrentIndex(panel.tiers.findData("gpu-full"))
    assert saved[-1].model_tier == "gpu-full"
    assert "26B-A4B instruct, Q4_K_M" in _llm_text(dialog)
    assert "asks more than this machine has (no GPU the language model can use)" in (
        panel.choice_note.text())
    assert "(not for this machine)" in panel.tiers.currentText()
    panel.tiers.setCurrentIndex(panel.tiers.findData("cpu-medium"))
    assert saved[-1].model_tier is None  # back to following the recommendation
    assert panel.choice_note.isHidden()


def test_a_saved_choice_is_preselected(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, Settings(model_tier="cpu-small"))
    assert dialog.panel is not None and dialog.panel.chosen == "cpu-small"
    assert "Gemma 4 E2B" in _llm_text(dialog)
    assert dialog.rows[1].info.production is None  # this tier keeps the embedded recognizer


def test_one_click_downloads_the_whole_tier_through_the_mirror(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetched: list[tuple[str, str, str | None]] = []
    lock = threading.Lock()

    def fake_download(entry: ModelEntry, cancel: threading.Event, report: Report,
                      endpoint: str | None = None) -> Path:
        report((1, 2))
        with lock:
            fetched.append((entry.role, entry.variant, endpoint))
        return Path("/models") / entry.main

    monkeypatch.setattr(models_dialog, "_download", fake_download)
    dialog = _dialog(qtbot, Settings(model_endpoint="https://hf-mirror.com"))
    assert dialog.panel is not None
    dialog.panel.download_button.click()
    qtbot.waitUntil(lambda: not any(r.downloading for r in dialog.rows), timeout=5_000)
    assert sorted(fetched) == [("asr", "small", "https://hf-mirror.com"),
                               ("llm", "e4b", "https://hf-mirror.com"),
                               ("tts", "production", "https://hf-mirror.com")]
    assert all("Downloaded to" in r.state.text() for r in dialog.rows if r.info.production)
    assert not dialog.panel.download_button.isVisible()  # nothing left to fetch


def test_mirror_is_checked_then_saved(qtbot: QtBot) -> None:
    saved: list[Settings] = []
    dialog = _dialog(qtbot, saved=saved)
    panel = dialog.panel
    assert panel is not None
    panel.mirror.setText("hf-mirror.com")
    panel.mirror.editingFinished.emit()
    assert saved == [] and "not an http:// or https:// address" in panel.mirror_note.text()
    panel.mirror.setText("https://hf-mirror.com/")
    panel.mirror.editingFinished.emit()
    assert saved[-1].model_endpoint == "https://hf-mirror.com"
    assert panel.mirror_note.isHidden()


def test_a_short_dialog_scrolls_instead_of_clipping(qtbot: QtBot) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app)
    dialog = _dialog(qtbot, Settings(model_tier="gpu-full"))
    dialog.resize(600, 380)
    qtbot.wait(20)  # let the layout settle (runs the event loop)
    SHOTS.mkdir(exist_ok=True)
    platform = QGuiApplication.platformName()
    assert dialog.grab().save(str(SHOTS / f"dialog-models-tiers-short-{platform}.png"))
    labels = [lab for row in dialog.rows for lab in row.findChildren(QLabel)]
    assert any("Q4_K_M" in lab.text() for lab in labels)
    for lab in labels:
        if lab.wordWrap() and lab.isVisible():
            assert lab.height() >= lab.heightForWidth(lab.width()), lab.text()
    assert dialog.scroller.verticalScrollBar().maximum() > 0
    dialog.resize(640, 900)
    qtbot.wait(20)
    assert dialog.grab().save(str(SHOTS / f"dialog-models-tiers-{platform}.png"))


def test_the_window_keeps_and_saves_the_choice(
    qtbot: QtBot, window: MainWindow, saved: list[Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models_dialog, "gather", lambda _report=None: _report_for_laptop())
    session = Session(window.bridge.post, fake=True, parent=window)  # never started
    launcher = DialogLauncher(window, session, lambda _settings: None)
    launcher.open_models()
    dialogs = window.findChildren(ModelsDialog)
    assert len(dialogs) == 1
    dialog = dialogs[0]
    qtbot.waitUntil(lambda: dialog.panel is not None, timeout=5_000)
    assert dialog.panel is not None
    dialog.panel.tiers.setCurrentIndex(dialog.panel.tiers.findData("cpu-small"))
    assert window.settings.model_tier == "cpu-small"
    qtbot.waitUntil(lambda: bool(saved) and saved[-1].model_tier == "cpu-small", timeout=5_000)
    dialog.close()


def _report_for_laptop() -> ModelsReport:
    return _report()


@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_screenshot_on_each_machine_shows_all_its_text(qtbot: QtBot, machine: str) -> None:
    """As opened from the window (shown, then the report arrives): no clipped text, and the
    tier panel's recommendation and any fix are visible without scrolling sideways."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app)
    dialog = ModelsDialog(gather_now=False)
    qtbot.addWidget(dialog)
    dialog.resize(640, 720)
    dialog.show()
    qtbot.wait(20)
    dialog.show_report(_report(MACHINES[machine]))
    qtbot.wait(50)  # let the layout settle (runs the event loop)
    SHOTS.mkdir(exist_ok=True)
    platform = QGuiApplication.platformName()
    assert dialog.grab().save(str(SHOTS / f"dialog-models-{machine}-{platform}.png"))
    panel = dialog.panel
    assert panel is not None and panel.reason.isVisible()
    assert panel.width() <= dialog.scroller.viewport().width()
    for lab in dialog.findChildren(QLabel):
        if lab.wordWrap() and lab.isVisible():
            assert lab.height() >= lab.heightForWidth(lab.width()), lab.text()


def test_a_cpu_tier_on_a_gpu_machine_does_not_talk_about_gpu_fit(qtbot: QtBot) -> None:
    dialog = ModelsDialog(gather_now=False)
    qtbot.addWidget(dialog)
    dialog.show_report(_report(MACHINES["rtx3060-cpu-only-binding"]))
    assert dialog.note.text() == "GPU: NVIDIA GeForce RTX 3060, 12 GB"  # as the reason counts
    texts = [lab.text() for lab in dialog.rows[0].findChildren(QLabel)]
    assert "This tier runs the language model on the CPU (no GPU memory needed)." in texts
    assert not any("fit" in text for text in texts)
    panel = dialog.panel
    assert panel is not None
    panel.tiers.setCurrentIndex(panel.tiers.findData("gpu-small"))  # the user's override
    texts = [lab.text() for lab in dialog.rows[0].findChildren(QLabel)]
    assert any(text.startswith("Fits in NVIDIA GeForce RTX 3060 (12 GB;") for text in texts)
