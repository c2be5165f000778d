"""Opening a turn: its number, its utterance (with a reopened turn's words in front) and
the commands that start recognising it; and reopening a turn the user talked on over."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from app.core.events import SpeechPaused, TurnCancelled, TurnConfirmed, TurnStarted, UtteranceEnded
from app.core.held_audio import CarriedWords, HeldAudio, stream_end
from app.core.turn_commands import REOPENED, CancelTurn, Command, Publish, StartTurn
from app.core.turn_phase import TurnInFlight


@dataclass
class TurnOpener:
    sample_rate: int = 16_000
    carry_for_s: float = 10.0
    """Carried words join the next utterance only if it starts within this long."""
    _next_id: int = 1
    _carry: CarriedWords = field(init=False)
    _typed: str | None = None
    """A reopened typed turn's words, put in front of the next transcript."""

    def __post_init__(self) -> None:
        self._carry = CarriedWords(self.sample_rate, self.carry_for_s)

    def open(self, event: SpeechPaused | UtteranceEnded, held: bool,
             over_assistant: bool) -> tuple[TurnInFlight, list[Command]]:
        """A new turn for the utterance ``event`` ends (held: speculative, not yet
        confirmed) and the commands that announce it and start its recognition."""
        at, speech_start, speech_end = event.at, event.speech_start, event.speech_end
        carried = self._carry.audio
        utterance = self._carry.onto(HeldAudio(event.audio, stream_end(event)))
        joined = carried if carried is not None and self._carry.audio is not None else None
        turn = TurnInFlight(turn_id=self._next_id, confirmed=not held, audio=utterance,
                            over_assistant=over_assistant, carried=joined,
                            speech_start=speech_start, speech_end=speech_end)
        self._next_id += 1
        commands: list[Command] = [
            Publish(TurnStarted(turn.turn_id, at, speech_start, speech_end, speculative=held))
        ]
        if not held:
            self.confirmed()
            commands.append(Publish(TurnConfirmed(turn.turn_id, at, speech_start, speech_end)))
        own = utterance.samples.size - event.audio.size if joined is not None else 0
        commands.append(StartTurn(turn.turn_id, utterance.samples, held, voice_from=max(0, own),
                                  ends_at=utterance.end))
        return turn, commands

    def open_carried(self, words: HeldAudio, at: float) -> tuple[TurnInFlight, list[Command]]:
        """A confirmed turn for a reopened turn's words alone: what joined them was another
        voice, not the user going on, so the user's request is asked again as it was."""
        turn = TurnInFlight(turn_id=self._next_id, confirmed=True, audio=words)
        self._next_id += 1
        self.confirmed()
        start, end = words.spoken or (at, at)
        return turn, [Publish(TurnStarted(turn.turn_id, at, start, end, speculative=False)),
                      Publish(TurnConfirmed(turn.turn_id, at, start, end)),
                      StartTurn(turn.turn_id, words.samples, False)]

    def open_typed(self, text: str, at: float) -> tuple[TurnInFlight, list[Command]]:
        """A confirmed turn for words typed in the window (no audio to recognise)."""
        silence = HeldAudio(np.zeros(0, dtype=np.float32), at)
        turn = TurnInFlight(turn_id=self._next_id, confirmed=True, audio=silence, typed=text)
        self._next_id += 1
        self.confirmed()
        return turn, [Publish(TurnStarted(turn.turn_id, at, at, at, speculative=False)),
                      Publish(TurnConfirmed(turn.turn_id, at, at, at)),
                      StartTurn(turn.turn_id, silence.samples, False, typed=text)]

    def confirmed(self) -> None:
        """A confirmed turn holds the carried words now."""
        self._carry.audio = None

    def forget_carried(self) -> None:
        """Muting: words from before are not joined to what is said after."""
        self._carry.audio = None
        self._typed = None

    def take_typed(self) -> str | None:
        """The words of a typed turn the user talked on over, for the next transcript."""
        typed, self._typed = self._typed, None
        return typed

    def reopen(self, turn: TurnInFlight, at: float) -> list[Command]:
        """Drop ``turn`` and carry its words into the next one."""
        if turn.typed is not None:
            self._typed = turn.typed
        else:
            self._carry.audio = replace(turn.audio, spoken=_spoken(turn))
        return [Publish(TurnCancelled(turn.turn_id, at, REOPENED)), CancelTurn(turn.turn_id)]


def _spoken(turn: TurnInFlight) -> tuple[float, float] | None:
    """Where the user's words in ``turn`` began (those carried into it first) and ended."""
    if turn.speech_start is None or turn.speech_end is None:
        return None
    earlier = turn.carried.spoken if turn.carried is not None else None
    return (earlier[0] if earlier else turn.speech_start), turn.speech_end
