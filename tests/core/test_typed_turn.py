"""Typed requests (the window's text box): a confirmed turn whose words are known, answered
and committed like a spoken one; a reply going is talked over; speech before its reply
is heard carries the typed words into the next transcript."""

from __future__ import annotations

import numpy as np

from app.core.conversation import Conversation
from app.core.events import (
    AssistantState,
    BargeIn,
    PlaybackEnded,
    PlaybackStarted,
    SpeechStarted,
    StateChanged,
    Transcript,
    TurnCommitted,
    TurnConfirmed,
    UtteranceEnded,
)
from app.core.turn import TurnMachine
from app.core.turn_commands import CancelTurn, Command, Publish, Respond, StartTurn
from app.core.turn_history import TurnHistory

AUDIO = np.ones(1600, dtype=np.float32)


def _machine() -> TurnMachine:
    return TurnMachine(TurnHistory(Conversation("You are Hana.")))


def _published(commands: list[Command], kind: type) -> list[object]:
    return [c.event for c in commands if isinstance(c, Publish) and isinstance(c.event, kind)]


def _answered(m: TurnMachine, text: str, at: float) -> tuple[int, list[Command]]:
    commands = m.typed(text, at)
    start = next(c for c in commands if isinstance(c, StartTurn))
    assert start.typed == text.strip() and start.audio.size == 0  # nothing to recognise
    return start.turn_id, commands + m.handle(Transcript(start.turn_id, start.typed, at + 0.01))


def test_a_typed_request_is_a_confirmed_turn_answered_and_kept() -> None:
    m = _machine()
    turn_id, commands = _answered(m, "  What time is it?  ", 1.0)
    assert _published(commands, TurnConfirmed)
    assert [e.state for e in _published(commands, StateChanged)] == [AssistantState.THINKING]
    [respond] = [c for c in commands if isinstance(c, Respond)]
    assert respond.messages[-1].content.endswith("What time is it?")
    m.handle(PlaybackStarted(turn_id, 1.5))
    done = m.handle(PlaybackEnded(turn_id, "It is noon.", False, 3.0, 1.5))
    [committed] = _published(done, TurnCommitted)
    assert committed.user_text == "What time is it?" and committed.heard_text == "It is noon."
    assert m.conversation.exchanges == [("What time is it?", "It is noon.")]
    assert m.typed("   ", 4.0) == []  # an empty box sends nothing


def test_typing_over_a_reply_interrupts_it_and_answers_after_what_was_heard() -> None:
    m = _machine()
    first, _ = _answered(m, "Tell me a story.", 1.0)
    m.handle(PlaybackStarted(first, 1.5))
    commands = m.typed("Stop, what time is it?", 4.0)
    assert _published(commands, BargeIn)
    assert CancelTurn(first) in commands
    second = next(c for c in commands if isinstance(c, StartTurn)).turn_id
    words = m.handle(Transcript(second, "Stop, what time is it?", 4.01))
    assert not [c for c in words if isinstance(c, Respond)]  # the heard part goes first
    after = m.handle(PlaybackEnded(first, "Once upon a time", True, 4.02, 2.5))
    [respond] = [c for c in after if isinstance(c, Respond)]
    history = [m.content for m in respond.messages]
    assert "Once upon a time" in " ".join(history)
    assert history[-1].endswith("Stop, what time is it?")


def test_speaking_before_a_typed_reply_is_heard_carries_the_typed_words() -> None:
    m = _machine()
    typed = m.typed("Remind me", 1.0)
    first = next(c for c in typed if isinstance(c, StartTurn)).turn_id
    reopened = m.handle(SpeechStarted(at=1.4, speech_start=1.2))
    assert CancelTurn(first) in reopened
    spoken = m.handle(UtteranceEnded(at=2.5, speech_start=1.2, speech_end=2.0, audio=AUDIO))
    second = next(c for c in spoken if isinstance(c, StartTurn)).turn_id
    words = m.handle(Transcript(second, "to call mum at six.", 2.7))
    [respond] = [c for c in words if isinstance(c, Respond)]
    assert respond.messages[-1].content.endswith("Remind me to call mum at six.")
