"""When to say "Hmm,": the deadline of a late answer, and when the answer is on its way.

The acknowledgement is for a user left waiting in silence. It must not make them wait
longer: an answer queued behind a 0.6 s "えっと、" starts when the phrase ends, so a phrase
begun 0.3 s before the answer's audio was ready delays the answer by 0.3 s. A voice takes
about as long for a first chunk each turn, so once the reply's first chunk is with the voice
the rule knows roughly when its audio will be ready (figures: docs/latency.md, item 9).
At the deadline it stays quiet if that is before the phrase would end, and looks again a
moment after the audio was expected: an answer that is late after all still gets its
acknowledgement.
"""

from __future__ import annotations

from collections import deque

LATE_S = 0.15
"""How long after the answer's expected audio the rule looks again."""
TAKES_KEPT = 3
"""Recent first chunks whose synthesis time makes the estimate (the slowest counts)."""


class AcknowledgementRule:
    """One deadline at a time, for the live confirmed turn (controller thread)."""

    def __init__(self) -> None:
        self._turn: int | None = None
        """The last turn armed (the turn being answered, or the one before it)."""
        self._deadline: float | None = None
        self.last_fired: int | None = None
        """The last turn an acknowledgement was queued for."""
        self.fired_count = 0
        self._in_voice: tuple[int, float] | None = None
        """The turn whose first chunk is with the voice, and since when."""
        self._takes: deque[float] = deque(maxlen=TAKES_KEPT)
        """How long the voice took to make recent first chunks."""

    def arm(self, turn_id: int, deadline: float) -> bool:
        """Start the deadline for a confirmed turn. Not armed when the turn before this
        one was acknowledged (never twice in a row), nor again for a turn already armed.
        Returns whether it is armed."""
        if turn_id == self._turn:
            return self._deadline is not None
        previous_fired = self._turn is not None and self.last_fired == self._turn
        self._turn = turn_id
        self._deadline = None if previous_fired else deadline
        return self._deadline is not None

    def voice_started(self, turn_id: int, at: float) -> None:
        """The turn's first chunk went to the voice at ``at`` (a speculative turn's may,
        before the turn is confirmed and armed)."""
        self._in_voice = (turn_id, at)

    def answer_queued(self, turn_id: int, at: float) -> None:
        """The turn's answer audio is ready: no acknowledgement needed; a first chunk's
        audio also says how long the voice takes."""
        if self._in_voice is not None and self._in_voice[0] == turn_id:
            self._takes.append(at - self._in_voice[1])
            self._in_voice = None
        if turn_id == self._turn:
            self._deadline = None

    def cancel(self, turn_id: int | None = None) -> None:
        """The user spoke again (any turn), or turn ``turn_id`` ended or was cancelled."""
        if turn_id is None or turn_id == self._turn:
            self._deadline = None

    def wait_s(self, now: float) -> float | None:
        """Seconds until the deadline (0 when due), or None when nothing is armed."""
        return None if self._deadline is None else max(0.0, self._deadline - now)

    def due(self, now: float, phrase_s: float = 0.0) -> int | None:
        """The turn to acknowledge now, once: the deadline passed with no answer audio,
        and none is expected before a phrase of ``phrase_s`` seconds would end."""
        if self._deadline is None or now < self._deadline or self._turn is None:
            return None
        expected = self._answer_expected()
        if expected is not None and expected + LATE_S > now and expected <= now + phrase_s:
            self._deadline = expected + LATE_S  # on its way: look again if it is late
            return None
        self._deadline = None
        self.last_fired = self._turn
        self.fired_count += 1
        return self._turn

    def _answer_expected(self) -> float | None:
        """When the live turn's first audio should be ready (None: not known)."""
        if self._in_voice is None or self._in_voice[0] != self._turn or not self._takes:
            return None
        return self._in_voice[1] + max(self._takes)

    def withdraw(self, turn_id: int) -> None:
        """The acknowledgement could not be queued after all (the answer's audio got to the
        speaker first, or no phrase is ready): it does not count as fired."""
        if self.last_fired == turn_id:
            self.last_fired = None
            self.fired_count -= 1
