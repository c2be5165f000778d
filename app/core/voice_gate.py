"""Whose voice a turn is in: with voices enrolled, speech from any other voice that does
not call the companion by name is not for it (a flatmate talking near the microphone).

Pure rules on a voice print (a unit vector from the speaker encoder) and the words. The
transcriber asks ``VoiceGate.ignores`` once a turn's words are known; the turn machine
drops such a turn like speech that was not the user's (no reply, a paused reply plays on).
With nobody enrolled it ignores nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from app.core.events import FloatAudio

SAME_VOICE_SIMILARITY = 0.75
"""Cosine similarity at or above which an utterance is an enrolled voice: near the bottom of
the same-voice range, since missing the user costs more than answering a flatmate (the
numbers: ``hanasu bench voices``, docs/audio.md)."""


GOING_ON_SIMILARITY = 0.65
"""The bar for speech that starts right after the user's own (``USER_GOES_ON_S``): most
likely the user going on, in a fragment too short for a good print; and for speech as loud
as the user's over a known quieter voice (``BackgroundVoice.over_it``), whose print it
blurs. Still above other voices' scores (the numbers: docs/audio.md)."""
USER_GOES_ON_S = 1.0
"""Speech starting this soon after an utterance in the user's voice is judged at
``GOING_ON_SIMILARITY``."""


@dataclass(frozen=True)
class VoicePrint:
    """One enrolled person's voice: the mean of their enrolment utterances' embeddings."""

    name: str
    embedding: tuple[float, ...]
    enrolled_at: float
    """Seconds since the epoch."""
    speech_s: float
    """How many seconds of speech it was made from."""

    @classmethod
    def from_embeddings(cls, name: str, embeddings: Sequence[FloatAudio], enrolled_at: float,
                        speech_s: float) -> VoicePrint:
        mean = np.mean(np.stack(embeddings), axis=0)
        norm = float(np.linalg.norm(mean))
        if norm == 0.0 or not np.isfinite(norm):
            raise ValueError("no voice in the enrolment audio")
        return cls(name, tuple(float(x) for x in mean / norm), enrolled_at, speech_s)


def _letters(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in folded if not unicodedata.combining(ch))


def _sound(word: str) -> str:
    """A rough spoken form: doubled letters once, a silent final h dropped ("Hannah" and
    "Hana" alike), so the recognizer's spelling of a name still matches."""
    collapsed = re.sub(r"(.)\1+", r"\1", word)
    return collapsed[:-1] if len(collapsed) > 3 and collapsed.endswith("h") else collapsed


def _close(a: str, b: str) -> bool:
    """Equal, or one letter apart for names of five letters or more."""
    if a == b:
        return True
    if min(len(a), len(b)) < 5 or abs(len(a) - len(b)) > 1:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1] <= 1


def addressed(text: str, names: Sequence[str]) -> bool:
    """Whether ``text`` calls the companion by one of ``names`` (or a word of one, like
    "Mori" of "Captain Mori"). Names without spaces in their script (Japanese, Chinese) are
    looked for anywhere in the text."""
    folded = _letters(text)
    words = {_sound(word) for word in re.findall(r"\w+", folded)}
    for name in names:
        for part in re.findall(r"\w+", _letters(name)):
            if not part.isascii():
                if part in folded:
                    return True
            elif len(part) >= 3 and any(_close(_sound(part), word) for word in words):
                return True
    return False


@dataclass(frozen=True)
class VoiceGate:
    prints: tuple[VoicePrint, ...] = ()
    names: tuple[str, ...] = ()
    """What the companion is called (the persona's name): saying it is always heard."""
    threshold: float = SAME_VOICE_SIMILARITY
    _matrix: FloatAudio = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rows = [p.embedding for p in self.prints]
        matrix = np.array(rows, dtype=np.float32) if rows else np.zeros((0, 0), np.float32)
        object.__setattr__(self, "_matrix", matrix)

    @property
    def active(self) -> bool:
        """Voices are enrolled: the gate has something to compare with."""
        return bool(self.prints)

    def similarity(self, embedding: FloatAudio) -> float:
        """The closest enrolled voice's cosine similarity (-1 with nobody enrolled)."""
        if not self.active or embedding.shape != (self._matrix.shape[1],):
            return -1.0
        return float(np.max(self._matrix @ embedding))

    def known(self, embedding: FloatAudio, going_on: bool = False) -> bool:
        """An enrolled voice; ``going_on``: the speech began right after the user's own."""
        bar = min(self.threshold, GOING_ON_SIMILARITY) if going_on else self.threshold
        return self.similarity(embedding) >= bar

    def ignores(self, embedding: FloatAudio | None, text: str, going_on: bool = False) -> bool:
        """Not for the companion: voices are enrolled, this utterance's is none of them,
        and its words do not call the companion by name. An utterance with no voice print
        (the encoder failed) is never ignored."""
        if not self.active or embedding is None or not text.strip():
            return False
        return not self.known(embedding, going_on) and not addressed(text, self.names)
