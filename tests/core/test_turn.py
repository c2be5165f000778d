"""The turn machine: event order, speculative turns, barge-in, heard-text accounting."""

from __future__ import annotations

import numpy as np

from app.core.conversation import Conversation
from app.core.events import (
    AssistantState,
    BargeIn,
    PlaybackEnded,
    PlaybackStarted,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
    StateChanged,
    Transcript,
    TurnCommitted,
    UtteranceEnded,
)
from app.core.turn import CancelTurn, Command, Publish, ReleaseTurn, Respond, StartTurn, TurnMachine

AUDIO = np.ones(1600, dtype=np.float32)


def machine(**kwargs: bool) -> TurnMachine:
    return TurnMachine(Conversation("You are Hana."), **kwargs)


def names(commands: list[Command]) -> list[str]:
    out = []
    for c in commands:
        out.append(type(c.event).__name__ if isinstance(c, Publish) else type(c).__name__)
    return out


def states(commands: list[Command]) -> list[AssistantState]:
    return [
        c.event.state
        for c in commands
        if isinstance(c, Publish) and isinstance(c.event, StateChanged)
    ]


def start_of(commands: list[Command]) -> StartTurn:
    return next(c for c in commands if isinstance(c, StartTurn))


def paused(at: float = 1.0) -> SpeechPaused:
    return SpeechPaused(at=at, speech_start=0.2, speech_end=at - 0.16, audio=AUDIO)


def ended(at: float = 1.3) -> UtteranceEnded:
    return UtteranceEnded(at=at, speech_start=0.2, speech_end=0.84, audio=AUDIO)


def test_speculative_turn_is_held_then_released_at_end_of_turn() -> None:
    m = machine()
    assert states(m.handle(SpeechStarted(at=0.4, speech_start=0.2))) == [AssistantState.LISTENING]
    cmds = m.handle(paused())
    assert names(cmds) == ["TurnStarted", "StartTurn"]
    start = cmds[1]
    assert isinstance(start, StartTurn) and start.held
    respond = m.handle(Transcript(start.turn_id, "What is your name?", 1.2))
    assert isinstance(respond[0], Respond)
    assert respond[0].messages[-1].content == "What is your name?"
    assert respond[0].messages[0].role == "system"
    cmds = m.handle(ended())
    assert names(cmds) == ["TurnConfirmed", "ReleaseTurn", "StateChanged"]
    assert states(cmds) == [AssistantState.THINKING]


def test_user_resuming_cancels_the_speculative_turn_without_history() -> None:
    m = machine()
    m.handle(SpeechStarted(at=0.4, speech_start=0.2))
    start = m.handle(paused())[1]
    assert isinstance(start, StartTurn)
    cmds = m.handle(SpeechResumed(at=1.1))
    assert names(cmds) == ["TurnCancelled", "CancelTurn"]
    # the cancelled turn's late transcript and playback report are ignored
    assert m.handle(Transcript(start.turn_id, "What is", 1.2)) == []
    assert m.handle(PlaybackEnded(start.turn_id, "", True, 1.2)) == []
    assert m.conversation.exchanges == []
    # the full utterance then starts a fresh turn
    cmds = m.handle(ended(2.0))
    new_start = start_of(cmds)
    assert new_start.turn_id != start.turn_id and not new_start.held


def test_stale_transcript_is_dropped() -> None:
    m = machine(speculative=False)
    first = start_of(m.handle(ended()))
    assert m.handle(Transcript(first.turn_id + 7, "stale", 1.5)) == []


def test_full_turn_commits_what_was_heard_and_returns_to_idle() -> None:
    m = machine(speculative=False)
    start = start_of(m.handle(ended()))
    m.handle(Transcript(start.turn_id, "Hi there", 1.5))
    assert states(m.handle(PlaybackStarted(start.turn_id, 1.8))) == [AssistantState.SPEAKING]
    cmds = m.handle(PlaybackEnded(start.turn_id, "Hello! Nice to meet you.", False, 3.0))
    assert names(cmds) == ["TurnCommitted", "StateChanged"]
    assert states(cmds) == [AssistantState.IDLE]
    assert m.conversation.exchanges == [("Hi there", "Hello! Nice to meet you.")]


def test_barge_in_cancels_the_reply_and_records_only_the_heard_part() -> None:
    m = machine(speculative=False)
    start = start_of(m.handle(ended()))
    m.handle(Transcript(start.turn_id, "Tell me a story", 1.5))
    m.handle(PlaybackStarted(start.turn_id, 1.8))
    cmds = m.handle(SpeechStarted(at=2.5, speech_start=2.2))
    assert names(cmds) == ["BargeIn", "TurnCancelled", "CancelTurn", "StateChanged"]
    barge = cmds[0]
    assert isinstance(barge, Publish) and isinstance(barge.event, BargeIn)
    cancel = cmds[2]
    assert isinstance(cancel, CancelTurn) and cancel.turn_id == start.turn_id
    assert states(cmds) == [AssistantState.LISTENING]
    committed = m.handle(PlaybackEnded(start.turn_id, "Once upon a", True, 2.5))
    event = committed[0]
    assert isinstance(event, Publish) and isinstance(event.event, TurnCommitted)
    assert m.conversation.exchanges == [("Tell me a story", "Once upon a")]
    # the new utterance is a new turn
    new = start_of(m.handle(ended(3.5)))
    assert new.turn_id > start.turn_id


def test_barge_in_before_anything_was_heard_merges_the_user_text() -> None:
    m = machine(speculative=False)
    start = start_of(m.handle(ended()))
    m.handle(Transcript(start.turn_id, "Tell me", 1.5))
    m.handle(SpeechStarted(at=1.6, speech_start=1.55))
    m.handle(PlaybackEnded(start.turn_id, "", True, 1.6))
    second = start_of(m.handle(ended(2.5)))
    respond = m.handle(Transcript(second.turn_id, "a story", 2.8))[0]
    assert isinstance(respond, Respond)
    users = [msg for msg in respond.messages if msg.role == "user"]
    assert [u.content for u in users] == ["Tell me a story"]


def test_barge_in_disabled_keeps_talking() -> None:
    m = machine(speculative=False, barge_in=False)
    start = start_of(m.handle(ended()))
    m.handle(Transcript(start.turn_id, "Hi", 1.5))
    m.handle(PlaybackStarted(start.turn_id, 1.8))
    assert "CancelTurn" not in names(m.handle(SpeechStarted(at=2.5, speech_start=2.2)))


def test_empty_transcript_abandons_the_turn() -> None:
    m = machine(speculative=False)
    start = start_of(m.handle(ended()))
    cmds = m.handle(Transcript(start.turn_id, "  ", 1.5))
    assert "Respond" not in names(cmds)
    assert m.live_turn_id is None
    assert m.state is AssistantState.IDLE


def test_empty_speculative_transcript_frees_its_playback_and_is_not_restarted() -> None:
    m = machine()
    start = m.handle(paused())[1]
    assert isinstance(start, StartTurn)
    cmds = m.handle(Transcript(start.turn_id, "", 1.1))
    assert names(cmds) == ["TurnCancelled", "CancelTurn"]
    assert "StartTurn" not in names(m.handle(ended()))
    assert m.live_turn_id is None


def test_muted_ignores_speech() -> None:
    m = machine()
    assert states(m.set_muted(True, 0.0)) == [AssistantState.MUTED]
    assert m.handle(SpeechStarted(at=0.4, speech_start=0.2)) == []
    assert m.handle(paused()) == []
    assert m.handle(ended()) == []
    assert states(m.set_muted(False, 2.0)) == [AssistantState.IDLE]


def test_release_follows_the_speculative_turn_id() -> None:
    m = machine()
    start = m.handle(paused())[1]
    release = next(c for c in m.handle(ended()) if isinstance(c, ReleaseTurn))
    assert isinstance(start, StartTurn) and release.turn_id == start.turn_id
