"""Learning the user's voice from the conversation itself (with their consent), for people
who never sit down to read the enrolment sentences.

While nobody is enrolled, each request that got words is a sample of whoever spoke it. The
user is the voice most of those requests are in: once enough of the recent ones agree with
one another (each close to their common centre, ``SAME_VOICE_SIMILARITY``) and they are most
of what was heard, their mean becomes a voice print like one made from a reading. A
flatmate's or the television's odd request falls outside the group and is left out of it;
two voices heard equally often never make a print at all.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from app.core.events import FloatAudio
from app.core.voice_gate import SAME_VOICE_SIMILARITY, VoicePrint

LEARNT_NAME = "You (learnt)"
"""The learnt print's name in Hanasu → Voices (renamed or deleted there like any other)."""
REQUESTS_NEEDED = 6
"""Requests in the one voice before it is trusted: a reading gives three sentences, but a
request is shorter and the group must outvote the odd other voice."""
SPEECH_NEEDED_S = 9.0
"""Seconds of speech in those requests (a reading is about 12 s)."""
SHORTEST_SAMPLE_S = 0.8
"""Shorter requests ("yes", "stop") carry too little voice to be a sample."""
RECENT = 12
"""Only the most recent requests count: a visitor's evening does not linger."""
MAJORITY = 0.6
"""Share of the recent requests the group must hold."""


@dataclass(frozen=True, eq=False)
class _Sample:
    embedding: FloatAudio
    speech_s: float


class VoiceLearner:
    """Collects the voice of each request; ``add`` returns the print once one voice has
    clearly been the one speaking. Used from one thread (the voice check's)."""

    def __init__(self, name: str = LEARNT_NAME, threshold: float = SAME_VOICE_SIMILARITY,
                 needed: int = REQUESTS_NEEDED, speech_needed_s: float = SPEECH_NEEDED_S
                 ) -> None:
        self.name, self.threshold = name, threshold
        self.needed, self.speech_needed_s = needed, speech_needed_s
        self._recent: deque[_Sample] = deque(maxlen=RECENT)

    @property
    def heard(self) -> int:
        """Samples held (for the Voices dialog's progress line)."""
        return len(self._recent)

    def add(self, embedding: FloatAudio, speech_s: float, at: float) -> VoicePrint | None:
        """One request's voice print (a unit vector) and its length; the learnt print when
        the recent requests now agree, else None."""
        if speech_s < SHORTEST_SAMPLE_S or not np.all(np.isfinite(embedding)):
            return None
        self._recent.append(_Sample(embedding.astype(np.float32), speech_s))
        group = self._group()
        speech = sum(s.speech_s for s in group)
        if (len(group) < self.needed or speech < self.speech_needed_s
                or len(group) < MAJORITY * len(self._recent)):
            return None
        self._recent.clear()
        return VoicePrint.from_embeddings(self.name, [s.embedding for s in group], at, speech)

    def _group(self) -> list[_Sample]:
        """The samples near the centre of the largest voice: the centre of all, then again
        of those near it, so an odd other voice first pulls it and is then left out."""
        group = list(self._recent)
        for _ in range(3):
            centre = _unit(np.mean(np.stack([s.embedding for s in group]), axis=0))
            if centre is None:
                return []
            near = [s for s in self._recent if float(s.embedding @ centre) >= self.threshold]
            settled = [id(s) for s in near] == [id(s) for s in group]
            group = near
            if not near or settled:
                break
        return group


def _unit(vector: FloatAudio) -> FloatAudio | None:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0.0 and np.isfinite(norm) else None
