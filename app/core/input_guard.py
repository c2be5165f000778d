"""Non-finite input (a broken file or driver) made silent before anything hears it.

Whisper turns NaN/Inf samples into ')))))' for as long as they last, and the echo
canceller and the VAD misbehave on them; they are counted, and logged once per stretch
(a stretch ends after a second of clean input; a never-ending one is logged once a minute).
"""

from __future__ import annotations

import logging

import numpy as np

from app.core.events import FloatAudio

log = logging.getLogger(__name__)

NONFINITE_QUIET_S = 1.0
"""Clean input that ends a stretch of NaN/Inf samples (one log line per stretch)."""
NONFINITE_LOG_EVERY_S = 60.0
"""A stretch that never ends is still logged this often."""


class NonFiniteGuard:
    """Replaces NaN/Inf with silence and counts every sample it has seen (``received``)."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self.received = 0
        """Samples seen so far: the listener's stream position before the canceller."""
        self.nonfinite_samples = 0
        """Non-finite input samples replaced with silence so far."""
        self._stretch = 0
        self._stretch_start = self._stretch_end = 0

    def clean(self, samples: FloatAudio) -> FloatAudio:
        bad = ~np.isfinite(samples)
        count = int(np.count_nonzero(bad))
        if count:
            samples = np.where(bad, np.float32(0.0), samples).astype(np.float32, copy=False)
            if not self._stretch:
                self._stretch_start = self.received + int(np.argmax(bad))
            self.nonfinite_samples += count
            self._stretch += count
            self._stretch_end = self.received + samples.size - int(np.argmax(bad[::-1]))
        self.received += samples.size
        rate = self.sample_rate
        if self._stretch and (
            self.received - self._stretch_end >= NONFINITE_QUIET_S * rate
            or self._stretch_end - self._stretch_start >= NONFINITE_LOG_EVERY_S * rate
        ):
            self.flush()
        return samples

    def flush(self) -> None:
        """Log the stretch still open (the input ended in it)."""
        if not self._stretch:
            return
        rate = self.sample_rate
        log.warning(
            "replaced %d non-finite (NaN/Inf) input samples with silence, %.2f-%.2f s",
            self._stretch, self._stretch_start / rate, self._stretch_end / rate,
        )
        self._stretch = 0
