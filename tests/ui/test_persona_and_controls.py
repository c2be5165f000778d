"""Persona switching, the no-record-button rule, error states and the dialogs."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QWidget
from pytestqt.qtbot import QtBot

from app.core.events import AssistantState
from app.core.pipeline import VoicePipeline
from app.models.catalog import load_catalog
from app.personas.loader import PersonaLibrary
from app.storage.settings import Settings
from app.ui.model_info import ModelsReport, RoleInfo
from app.ui.models_dialog import ModelsDialog
from app.ui.settings_dialog import SettingsDialog
from app.ui.window import MainWindow

FORBIDDEN = re.compile(r"record|push|talk|ptt", re.IGNORECASE)


def _system_prompt(pipeline: VoicePipeline) -> str:
    return pipeline.machine.conversation.system_messages()[0].content


def test_selecting_a_persona_switches_prompt_and_face(
    qtbot: QtBot, window: MainWindow, pipeline: VoicePipeline, library: PersonaLibrary,
    saved: list[Settings],
) -> None:
    kai = library.get("kai")
    before = window.avatar.grab().toImage().pixelColor(12, 12)
    assert _system_prompt(pipeline) != kai.full_system_prompt()
    window.sidebar.select("kai")
    qtbot.waitUntil(lambda: _system_prompt(pipeline) == kai.full_system_prompt(), timeout=5_000)
    assert window.avatar.avatar_style == kai.avatar
    assert window.title.text() == kai.name
    assert window.avatar.grab().toImage().pixelColor(12, 12) != before
    qtbot.waitUntil(lambda: bool(saved) and saved[-1].persona_id == "kai", timeout=5_000)


def _buttons(root: QWidget) -> list[QAbstractButton]:
    return root.findChildren(QAbstractButton)  # type: ignore[return-value]


def test_there_is_no_record_or_push_to_talk_control(qtbot: QtBot, window: MainWindow) -> None:
    settings = SettingsDialog(Settings(), window, load_devices=False)
    models = ModelsDialog(window, gather_now=False)
    qtbot.addWidget(settings)
    qtbot.addWidget(models)
    widgets: list[QWidget] = [*_buttons(window), *_buttons(settings), *_buttons(models)]
    assert widgets
    for button in widgets:
        assert isinstance(button, QAbstractButton)
        for text in (button.text(), button.toolTip(), button.objectName()):
            assert not FORBIDDEN.search(text), f"{type(button).__name__} {text!r}"
    for action in window.actions() + window.menuBar().actions():
        assert not FORBIDDEN.search(action.text()), action.text()


def test_device_error_banner_and_recovery(window: MainWindow) -> None:
    window.set_device_status(False, "Microphone 'USB Mic' was disconnected.")
    assert window.banner.isVisible()
    assert "disconnected" in window.banner.text.text()
    assert window.avatar.state is AssistantState.ERROR
    window.set_device_status(True, "Audio is back.")
    assert not window.banner.isVisible()
    assert window.avatar.state is AssistantState.IDLE


def test_device_status_from_another_thread_goes_through_the_bridge(
    qtbot: QtBot, window: MainWindow
) -> None:
    import threading

    from app.adapters.audio_devices import DeviceStatus

    thread = threading.Thread(target=window.bridge.post,
                              args=(DeviceStatus(False, "Speaker unplugged"),))
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: window.avatar.state is AssistantState.ERROR, timeout=2_000)
    assert "Speaker unplugged" in window.banner.text.text()


def test_missing_model_shows_a_message_not_a_crash(window: MainWindow) -> None:
    window.show_load_error("LLM model not found: /nope.gguf — run `hanasu models download llm`")
    assert window.banner.isVisible()
    assert "/nope.gguf" in window.banner.text.text()
    assert window.banner.button.text() == "Models…"
    assert window.avatar.state is AssistantState.ERROR


def test_ctrl_m_mutes_from_the_keyboard(qtbot: QtBot, window: MainWindow) -> None:
    window.activateWindow()
    window.transcript.setFocus()
    qtbot.keyClick(window.transcript, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert window.muted and window.avatar.state is AssistantState.MUTED
    qtbot.keyClick(window.transcript, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert not window.muted


def test_hud_toggle_shortcut(window: MainWindow) -> None:
    assert window.hud_action.shortcut().toString() == "Ctrl+L"
    assert not window.hud.isVisible()
    window.hud_action.trigger()
    assert window.hud.isVisible() and window.hud_button.isChecked()


def test_settings_dialog_builds_validated_settings(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(), load_devices=False)
    qtbot.addWidget(dialog)
    dialog.end_of_turn.setValue(720)
    dialog.barge_in.setChecked(False)
    dialog.gpu_layers.setValue(20)
    dialog.voice.setText("af_bella")
    dialog._fill_devices((["Built-in Mic", "USB Mic"], ["Speakers"]))
    dialog.input_combo.setCurrentIndex(dialog.input_combo.findData("USB Mic"))
    result = dialog.collect()
    assert result.end_of_turn_ms == 720 and not result.barge_in
    assert result.n_gpu_layers == 20 and result.tts_voice == "af_bella"
    assert result.input_device == "USB Mic" and result.output_device is None
    dialog.gpu_layers.setValue(-1)
    assert dialog.collect().n_gpu_layers is None


def test_models_dialog_without_gpu_says_so(qtbot: QtBot) -> None:
    entry = load_catalog().downloadable("llm")[0]
    dialog = ModelsDialog(gather_now=False)
    qtbot.addWidget(dialog)
    dialog.show_report(ModelsReport([RoleInfo("llm", "embedded · 400 MB", entry, "missing")],
                                    gpu=None))
    texts = " ".join(label.text() for label in dialog.findChildren(type(dialog.note)))
    assert "No GPU detected" in texts
    assert dialog.rows[0].download_button.isVisible() or not dialog.isVisible()


def test_stage_failure_banner_clears_on_the_next_turn(window: MainWindow) -> None:
    from app.core.events import StageFailed, StateChanged

    window.bridge.post(StageFailed("asr", "CUDA out of memory"))
    window.bridge.post(StateChanged(AssistantState.ERROR, 0.0))
    window.bridge.drain()
    assert window.banner.isVisible() and "CUDA out of memory" in window.banner.text.text()
    assert window.avatar.state is AssistantState.ERROR
    window.bridge.post(StateChanged(AssistantState.LISTENING, 1.0))
    window.bridge.drain()
    assert not window.banner.isVisible()
    assert window.avatar.state is AssistantState.LISTENING
