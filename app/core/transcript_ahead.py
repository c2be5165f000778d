"""The transcript of an utterance made at its first quiet frame, ahead of the pause.

The speculative turn starts at the 96 ms pause, and its transcript used to start there
too. The words are already all said one 32 ms frame into that silence, so the recognizer
is given the utterance then (``TranscribeAhead``), while the pause is still being
counted; when the pause's turn arrives with the same audio plus nothing but the quiet
frames since, that transcript is its transcript, ready up to 64 ms sooner. A voice that
goes on makes the audio grow past the quiet frames, and the turn is transcribed as
before: the ahead transcript is only ever used for the audio it was made from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.core.events import FloatAudio


def only_quiet_since(made_on: int, now: int, quiet_tail: int) -> bool:
    """Whether an utterance of ``now`` samples is the one of ``made_on`` samples plus at
    most ``quiet_tail`` (the quiet frames up to the pause): what was worked out ahead of
    the pause, the words or the audio model's score, still holds for it."""
    return made_on > 0 and 0 <= now - made_on <= quiet_tail


@dataclass(frozen=True)
class AheadTranscript:
    audio: FloatAudio
    text: str
    language: str | None
    """The language the recognizer heard ("" text: None)."""


class TranscriptsAhead:
    """Keeps the newest ahead transcript until a turn takes it or it goes stale."""

    def __init__(self, quiet_tail_samples: int) -> None:
        """``quiet_tail_samples``: the most audio a turn may have past the ahead
        transcript's (the quiet frames between the first quiet frame and the pause)."""
        self.quiet_tail_samples = quiet_tail_samples
        self._kept: AheadTranscript | None = None
        self.made = 0
        self.used = 0

    def keep(self, transcript: AheadTranscript) -> None:
        self._kept = transcript
        self.made += 1

    def forget(self) -> None:
        """The recognizer changed (languages, names): what it heard before may differ."""
        self._kept = None

    def take(self, audio: FloatAudio) -> AheadTranscript | None:
        """The transcript made ahead of ``audio``'s pause, if ``audio`` is its audio and
        then only the quiet tail; taken once, forgotten either way."""
        kept, self._kept = self._kept, None
        if kept is None:
            return None
        made_on = kept.audio.size
        if not only_quiet_since(made_on, audio.size, self.quiet_tail_samples):
            return None
        if not np.array_equal(audio[:made_on], kept.audio):
            return None
        self.used += 1
        return kept
