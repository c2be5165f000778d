"""The silent edges of synthesized speech, cut where the user would only wait through them.

Voices pad what they make with near-silence before the first sound (how much, per voice:
docs/latency.md, item 8). Before a reply's first words that padding is latency the user
hears as the companion hesitating, so a chunk's leading silence is cut down to a few milliseconds of
lead-in. The trailing silence is the voice's own pause after a sentence or a clause,
so a reply chunk keeps it; an acknowledgement ("Hmm,") keeps only a short tail, because the
answer follows it.
"""

from __future__ import annotations

import numpy as np

from app.core.events import FloatAudio

QUIET = 1e-3
"""Amplitude under which a voice's edge counts as silence (-60 dBFS: the padding is digital
silence or close to it, a soft "h" or "f" starts well above it)."""
LEAD_IN_S = 0.005
"""Silence kept before the first sound, so the onset is never cut into."""
ACKNOWLEDGEMENT_TAIL_S = 0.06
"""Silence kept after an acknowledgement, so it does not run into the answer."""


def without_lead(samples: FloatAudio, sample_rate: int) -> FloatAudio:
    """``samples`` from ``LEAD_IN_S`` before the first sound; all silence stays as it is
    (nothing to say is not made shorter than nothing)."""
    loud = np.flatnonzero(np.abs(samples) > QUIET)
    if loud.size == 0:
        return samples
    start = max(0, int(loud[0]) - int(LEAD_IN_S * sample_rate))
    return samples[start:]


def trim_silence(samples: FloatAudio, sample_rate: int) -> FloatAudio:
    """Drop leading silence and all but ``ACKNOWLEDGEMENT_TAIL_S`` of the trailing silence:
    every millisecond of an acknowledgement's tail delays the answer behind it."""
    loud = np.flatnonzero(np.abs(samples) > QUIET)
    if loud.size == 0:
        return samples[:0]
    end = min(samples.size, int(loud[-1]) + 1 + int(ACKNOWLEDGEMENT_TAIL_S * sample_rate))
    return samples[int(loud[0]) : end]
