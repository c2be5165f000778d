"""The turn machine's barge-in state: a reply paused under the user's voice, what the
assistant said last, and an interrupted reply whose heard part must be committed before
the interrupting turn is answered. What *counts* as a barge-in is ``barge_in``'s."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.barge_in import BargeInPolicy
from app.core.events import BargeIn, TurnCancelled
from app.core.turn_commands import CancelTurn, Command, Publish
from app.core.turn_phase import TurnInFlight
from app.core.utterance_text import words_after


@dataclass
class ReplyHold:
    policy: BargeInPolicy
    held: TurnInFlight | None = None
    """A reply paused under the user's voice, until their words confirm the barge-in."""
    since: float = 0.0
    """When the voice that paused it began (``SpeechStarted.at``)."""
    interrupted: int | None = None
    """A barged-in reply whose heard part must be in the history before the next turn's
    prompt is built (its PlaybackEnded says what was heard)."""
    recent_words: list[str] = field(default_factory=list)
    """The last words the assistant spoke: speech that repeats them is its own echo."""

    words_only: bool = False
    """Only words drop the held reply, never the deadline: it was held again for a voice
    going on after words that were not the user's (echo may still be leaking)."""

    dismissed: str = ""
    """The words of the voice in progress judged not the user's (the reply played on): a
    reply held again for that voice judges only what was said after them."""

    reply_ended_at: float | None = None
    """When the last reply stopped playing (``PlaybackEnded.at``)."""
    reply_asked: bool = False
    """The last thing the assistant said was a question: "Yes." after it is an answer."""

    def hold(self, turn: TurnInFlight, at: float, words_only: bool = False) -> None:
        self.held, self.since, self.words_only = turn, at, words_only
        if not words_only:
            self.dismissed = ""  # a new voice

    def deadline(self) -> float | None:
        """When speech over the paused reply has lasted long enough to be a barge-in."""
        if self.held is None or self.words_only:
            return None
        return self.policy.confirm_at(self.since)

    def confirm(self, at: float) -> list[Command]:
        """The user's words (or the deadline) say it is a barge-in: drop the held reply."""
        held = self.held
        if held is None:
            return []
        self.held, self.words_only, self.dismissed = None, False, ""
        self.interrupted = held.turn_id
        return [
            Publish(BargeIn(turn_id=held.turn_id, at=self.since)),
            Publish(TurnCancelled(held.turn_id, at, "barge-in")),
            CancelTurn(held.turn_id),
        ]

    def release(self) -> TurnInFlight | None:
        """Take back the held reply to play it on (echo, a cough, "mm-hm")."""
        held, self.held, self.words_only = self.held, None, False
        return held

    def spoke(self, text: str) -> None:
        if text.strip():
            self.reply_asked = text.rstrip().rstrip("\"')\u201d\u2019").endswith(("?", "\uff1f"))
        words = [*self.recent_words, *text.split()]
        self.recent_words = words[-self.policy.config.recent_reply_words:]

    def not_the_user(self, text: str) -> bool:
        """Words over the assistant that are its own echo, a hallucination or a backchannel
        (after the part of them already judged, for a reply held again)."""
        said = words_after(text, self.dismissed) if self.words_only else text
        return self.policy.not_the_user(said, self.recent_words,
                                        reply_still_going=self.held is not None)

    def acknowledges(self, text: str, speech_start: float | None) -> bool:
        """Words of a voice begun at ``speech_start`` that only acknowledge the last reply."""
        since = (None if self.reply_ended_at is None or speech_start is None
                 else speech_start - self.reply_ended_at)
        return self.policy.acknowledges(text, since, self.reply_asked)

    def playback_ended(self, turn_id: int, played_s: float, at: float) -> tuple[bool, bool]:
        """(whether the reply was barged in on, whether it was cut before it was heard as an
        answer). A reply that paused within a VAD frame or two of the onset and had played
        under ~0.3 s leaves the request unanswered, joined to the user's next words."""
        self.reply_ended_at = at
        if self.held is not None and self.held.turn_id == turn_id:
            self.held, self.words_only = None, False  # ended (or dropped) while held
        barged_in = self.interrupted == turn_id
        if barged_in:
            self.interrupted = None
        return barged_in, barged_in and not self.policy.reply_was_heard(played_s)
