"""The text box: a typed request goes through the same turn as speech (the reply is spoken,
shown and kept), with the microphone muted too; nothing is lost while the engines load."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.core.events import AssistantState
from app.core.pipeline import VoicePipeline
from app.ui.window import MainWindow
from tests.ui.conftest import REPLY, Speaker

S = AssistantState


def test_a_typed_request_is_answered_aloud_and_shown(qtbot: QtBot, window: MainWindow,
                                                     pipeline: VoicePipeline) -> None:
    window.mute_action.trigger()  # a quiet office: the microphone is off, typing still works
    box = window.type_box
    assert box.line.accessibleName() and not box.button.isEnabled()
    speaker = Speaker(pipeline, speed=2.0)
    qtbot.keyClicks(box.line, "What is the capital of France?")
    assert box.button.isEnabled()
    with qtbot.waitSignal(window.bridge.playback_ended, timeout=15_000) as ended:
        qtbot.keyClick(box.line, "\r")
    speaker.stop()
    turn_id, heard, interrupted = ended.args
    assert box.line.text() == ""  # sent
    assert heard == REPLY and not interrupted
    assert "What is the capital of France?" in window.transcript.user_text(turn_id)
    assert REPLY.split()[0] in window.transcript.reply_html(turn_id)
    qtbot.waitUntil(lambda: pipeline.machine.conversation.exchanges == [
        ("What is the capital of France?", REPLY)], timeout=5_000)
    qtbot.waitUntil(lambda: window.pipeline_state is S.MUTED, timeout=5_000)


def test_typing_before_the_engines_run_keeps_the_words(qtbot: QtBot, window: MainWindow) -> None:
    window.detach_pipeline()
    window.type_box.line.setText("Hello?")
    window.type_box.submit()
    assert window.type_box.line.text() == "Hello?"  # kept to send again
