"""Session: engines load in the background; restarts swap pipelines; load errors are shown."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from app.models.errors import ModelError
from app.storage.settings import Settings
from app.ui import session as session_module
from app.ui.session import Session
from app.ui.window import MainWindow


def test_start_and_restart_in_the_background(qtbot: QtBot, window: MainWindow) -> None:
    session = Session(window.bridge.post, fake=True, parent=window)
    session.ready.connect(window.attach_pipeline)
    with qtbot.waitSignal(session.ready, timeout=10_000) as first:
        session.start(window.settings, window.persona)
    old = first.args[0]
    assert window.pipeline is old
    with qtbot.waitSignal(session.ready, timeout=10_000) as second:
        session.start(Settings(end_of_turn_ms=800, barge_in=False), window.persona)
    new = second.args[0]
    assert new is not old and window.pipeline is new
    assert new.config.endpoint.end_of_turn_ms == 800 and not new.config.barge_in
    assert not old.running  # the old pipeline was stopped off the GUI thread
    session.shutdown()
    assert not new.running


def test_missing_model_message_in_the_window(qtbot: QtBot, window: MainWindow,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> object:
        raise ModelError("LLM model not found: /nope.gguf")

    monkeypatch.setattr(session_module, "build_engines", broken)
    session = Session(window.bridge.post, fake=False, parent=window)
    session.failed.connect(window.show_load_error)
    with qtbot.waitSignal(session.failed, timeout=10_000):
        session.start(window.settings, window.persona)
    assert "LLM model not found: /nope.gguf" in window.banner.text.text()
    assert window.status.text() == "The voice engines could not start"


def test_progress_messages_reach_the_window(qtbot: QtBot, window: MainWindow) -> None:
    session = Session(window.bridge.post, fake=True, parent=window)
    messages: list[str] = []
    session.progress.connect(messages.append)
    session.progress.connect(window.show_progress)
    with qtbot.waitSignal(session.ready, timeout=10_000):
        session.start(window.settings, window.persona)
    assert messages and messages[0] == "Loading engines…"
    session.shutdown()


def test_persona_picked_while_loading_is_applied(qtbot: QtBot, window: MainWindow) -> None:
    session = Session(window.bridge.post, fake=True, parent=window)
    session.ready.connect(lambda p: window.attach_pipeline(p, session.persona_id))
    with qtbot.waitSignal(session.ready, timeout=10_000) as ready:
        session.start(window.settings, window.persona)
        window.sidebar.select("captain")
    pipeline = ready.args[0]
    captain = window.library.get("captain").full_system_prompt()
    qtbot.waitUntil(
        lambda: pipeline.machine.conversation.system_messages()[0].content == captain,
        timeout=5_000)
    session.shutdown()


def test_learning_the_users_voice_is_resumed_at_start_until_a_voice_is_known(
        qtbot: QtBot, window: MainWindow) -> None:
    """"Learn my voice" survives a restart (the samples start again); once anyone is
    enrolled it does not run, whatever the setting says."""
    import time

    from app.core.voice_gate import VoicePrint
    from app.storage.voice_prints import VoicePrintStore

    session = Session(window.bridge.post, fake=True, parent=window)
    learning = Settings(learn_voice=True)
    with qtbot.waitSignal(session.ready, timeout=10_000) as started:
        session.start(learning, window.persona)
    qtbot.waitUntil(lambda: started.args[0].transcriber.voices.learner is not None, timeout=3000)
    VoicePrintStore().save(VoicePrint("Alice", (1.0,) + (0.0,) * 255, time.time(), 12.0))
    with qtbot.waitSignal(session.ready, timeout=10_000) as restarted:
        session.start(learning, window.persona)
    pipeline = restarted.args[0]
    qtbot.waitUntil(lambda: pipeline.controller.voices.gate.active, timeout=3000)
    assert pipeline.transcriber.voices.learner is None
    session.shutdown()
