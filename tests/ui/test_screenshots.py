"""Renders the main window in every avatar state to tests/ui/screenshots/*.png for review.

Run on a real X server too: ``HANASU_SCREENSHOT_XCB=1 DISPLAY=:99 pytest tests/ui -k screenshot``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from app.core.events import (
    AssistantState,
    PlaybackEnded,
    PlaybackStarted,
    SpeechAudio,
    Transcript,
    TurnConfirmed,
)
from app.core.metrics import TurnTimeline
from app.core.telemetry import TokenDelta
from app.ui.window import MainWindow

SHOTS = Path(__file__).parent / "screenshots"
S = AssistantState


def _script(window: MainWindow) -> None:
    """Two finished turns, the second one interrupted (greyed rest)."""
    turns = [
        (1, "Hi Hana! How was your day?",
         "Oh, it was lovely, thank you for asking. I spent the afternoon reading by the window.",
         False),
        (2, "Can you recommend a good book?",
         "Of course! If you like quiet stories, try The Remains of the Day. It is gentle and "
         "beautifully written, and the ending stays with you.", True),
    ]
    post = window.bridge.post
    for turn_id, user, reply, interrupted in turns:
        post(TurnConfirmed(turn_id, 0.0, 0.0, 0.0))
        post(Transcript(turn_id, user, 0.0))
        for i, word in enumerate(reply.split(" ")):
            post(TokenDelta(turn_id, word if i == 0 else " " + word, 0.0))
        post(SpeechAudio(turn_id, 0, reply, np.zeros(16, dtype=np.float32), 16_000, 0.0))
        post(PlaybackStarted(turn_id, 0.0))
        heard = " ".join(reply.split()[:9]) if interrupted else reply
        post(PlaybackEnded(turn_id, heard, interrupted, 0.0))
    window.bridge.drain()


@pytest.mark.parametrize("state", list(S), ids=[s.value for s in S])
def test_screenshot_each_state(qtbot: QtBot, window: MainWindow, state: AssistantState) -> None:
    SHOTS.mkdir(exist_ok=True)
    window.resize(1180, 740)
    _script(window)
    window.hud_action.setChecked(state is S.SPEAKING)
    window.hud.show_turn(TurnTimeline(
        turn_id=2, speech_end=10.0, end_of_turn=10.48, asr_final=10.21, llm_first_token=10.52,
        first_chunk_to_tts=10.61, tts_first_audio=10.74, first_sample_played=10.78,
        confirmed=True, prefix_reused=True))
    if state is S.MUTED:
        window.mute_action.trigger()
    elif state is S.ERROR:
        window.set_device_status(False, "Microphone “USB Mic” was disconnected. "
                                        "Plug it back in or choose another one in Settings.")
    else:
        window.bridge.state_changed.emit(state)
    window.avatar.freeze(t=1.3, mouth=0.7 if state is S.SPEAKING else 0.0)
    qtbot.wait(50)  # let layouts settle before grabbing (no sleep: it runs the event loop)
    assert window.avatar.state is state
    image = window.grab().toImage()
    platform = QGuiApplication.platformName()
    path = SHOTS / f"window-{state.value}-{platform}.png"
    assert image.save(str(path))
    assert path.stat().st_size > 10_000


def test_screenshot_dialogs(qtbot: QtBot, window: MainWindow) -> None:
    from app.models.catalog import load_catalog
    from app.storage.settings import Settings
    from app.ui.model_info import Gpu, ModelsReport, RoleInfo
    from app.ui.models_dialog import ModelsDialog
    from app.ui.settings_dialog import SettingsDialog

    SHOTS.mkdir(exist_ok=True)
    platform = QGuiApplication.platformName()
    settings = SettingsDialog(Settings(), window, load_devices=False)
    settings._fill_devices((["Built-in Microphone", "USB Mic"], ["Speakers", "Headphones"]))
    qtbot.addWidget(settings)
    settings.show()
    qtbot.wait(20)
    assert settings.grab().save(str(SHOTS / f"dialog-settings-{platform}.png"))
    catalog = load_catalog()
    roles = [RoleInfo(role, "embedded · 98 MB", (catalog.downloadable(role) or [None])[0],
                      "missing" if catalog.downloadable(role) else "embedded only")
             for role in ("llm", "asr", "tts", "vad")]
    models = ModelsDialog(window, gather_now=False)
    models.show_report(ModelsReport(roles, Gpu("NVIDIA RTX 4090", 24 * 2**30)))
    qtbot.addWidget(models)
    models.show()
    qtbot.wait(20)
    assert models.grab().save(str(SHOTS / f"dialog-models-{platform}.png"))
