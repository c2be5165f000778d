"""Whether the pause that started a speculative turn is its end: the turn's words and the
audio model's probability at that pause, combined into one call the listener acts on.

It costs the reply nothing: the reply could not start before the transcript anyway. The
words and the score arrive in either order; the call is made once both are known (or once
the words are, when the listener has no audio model)."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.events import EndOfTurnDecided, EndOfTurnScore
from app.core.turn_commands import Command, JudgeEndOfTurn, Publish
from app.core.turn_phase import TurnInFlight
from app.core.utterance_text import (
    END_OF_TURN_COMPLETE,
    EndOfTurnCall,
    end_of_turn_call,
    judge_text,
)


@dataclass(frozen=True)
class EndOfTurnJudge:
    enabled: bool = True
    """Send the listener an end-of-turn call from the speculative transcript's words."""
    complete_threshold: float = END_OF_TURN_COMPLETE

    def on_score(self, turn: TurnInFlight | None, event: EndOfTurnScore) -> list[Command]:
        """The audio model scored the pause; judge now if the words came first."""
        if turn is None or turn.confirmed:
            return []
        turn.end_probability = event.probability
        words = turn.text if turn.score_pending else None
        turn.score_pending = False
        return [] if words is None else self.judge(turn, words, event.at)

    def on_words(self, turn: TurnInFlight, text: str, at: float) -> list[Command]:
        """The speculative turn's words are known; judge now unless its score is still to
        come (``on_score`` judges then)."""
        if turn.confirmed or turn.score_pending:
            return []
        return self.judge(turn, text, at)

    def judge(self, turn: TurnInFlight, text: str, at: float) -> list[Command]:
        if not self.enabled or turn.pause_at is None:
            return []
        verdict = judge_text(text)
        call = end_of_turn_call(verdict, turn.end_probability, self.complete_threshold)
        decided = EndOfTurnDecided(turn.turn_id, at, turn.end_probability, verdict.value,
                                   call is EndOfTurnCall.END_NOW)
        return [Publish(decided), JudgeEndOfTurn(turn.pause_at, call)]
