"""The echo canceller's reference lined up with the microphone by time, not by arrival.

The canceller finds the delay between what the speaker played and where it is heard in the
capture, and re-learns it whenever that delay moves. Fed in arrival order, the reference
landed wherever the listener's thread happened to be in the capture when the speaker's copy
arrived, so the delay moved by the listener's lag at every reply (more under load) and the
echo leaked while the canceller caught up. Here each played block carries when it is heard
(``OutputFeeder`` stamps it) and each capture block when it was recorded (the listener's
stream clock), and ``TimedEchoCanceller`` feeds the canceller the reference for
exactly the stretch of time each capture block covers: the delay it sees is the room's.
"""

from __future__ import annotations

import numpy as np

from app.core.events import FloatAudio
from app.core.input_ring import InputRing
from app.core.ports import PIPELINE_SAMPLE_RATE, EchoCanceller

REFERENCE_LEAD_S = 0.02
"""The reference is fed this much ahead of the capture it goes with, so a play time
estimated a little late never puts the echo before its reference."""
PLAYED_RING_SAMPLES = 1 << 18
"""The speaker's copies (over 5 s at 48 kHz) the feeder may run ahead of the listener."""
PLAYED_RING_BLOCKS = 1024
QUIET_FEED_SAMPLES = PIPELINE_SAMPLE_RATE
"""After the speaker falls silent, silence is fed as the reference for this long (1 s);
then nothing, so the canceller may rest until the speaker plays again."""


class ReferenceTimeline:
    """What the speaker played, at 16 kHz, by pipeline-clock sample index."""

    def __init__(self) -> None:
        self._chunks: list[tuple[int, FloatAudio]] = []

    def add(self, samples: FloatAudio, rate: int, starts_at: float) -> None:
        """``samples`` at ``rate``, the first heard at ``starts_at``: resampled onto the
        16 kHz grid between the grid points its start and end fall on, so blocks that
        follow each other tile the grid exactly (a block resampled to a rounded length of
        its own would drift a fraction of a sample per block)."""
        ends_at = starts_at + samples.size / rate
        start = round(starts_at * PIPELINE_SAMPLE_RATE)
        end = round(ends_at * PIPELINE_SAMPLE_RATE)
        if self._chunks:
            last_start, last = self._chunks[-1]
            start = max(start, last_start + last.size)  # a stream plays once
        if samples.size == 0 or end <= start:
            return
        positions = (np.arange(start, end) / PIPELINE_SAMPLE_RATE - starts_at) * rate
        grid = np.interp(positions, np.arange(samples.size), samples).astype(np.float32)
        self._chunks.append((start, grid))

    def take(self, starts_at: float, count: int) -> FloatAudio | None:
        """The reference for ``count`` samples from ``starts_at`` (silence where nothing
        played), or None when nothing played then; what lies before it is forgotten."""
        begin = round(starts_at * PIPELINE_SAMPLE_RATE)
        finish = begin + count
        out: FloatAudio | None = None
        kept: list[tuple[int, FloatAudio]] = []
        for start, chunk in self._chunks:
            end = start + chunk.size
            if start < finish and end > begin:
                if out is None:
                    out = np.zeros(count, dtype=np.float32)
                lo, hi = max(start, begin), min(end, finish)
                out[lo - begin:hi - begin] = chunk[lo - start:hi - start]
            if end > finish:
                kept.append((start, chunk))
        self._chunks = kept
        return out

    def pending(self) -> int:
        return sum(chunk.size for _, chunk in self._chunks)


class TimedEchoCanceller:
    """Feeds ``echo`` the played reference due for each capture block, then the block."""

    def __init__(self, echo: EchoCanceller, played_rate: int) -> None:
        self.echo = echo
        self.played = InputRing(PLAYED_RING_SAMPLES, PLAYED_RING_BLOCKS)
        """The speaker's copies at ``played_rate``, each block with when its last sample is
        heard: written by the thread that pulls the playback (no lock), read here."""
        self._played_rate = played_rate
        self.timeline = ReferenceTimeline()
        self._quiet_samples = QUIET_FEED_SAMPLES
        """Capture samples since the speaker last played anything."""

    def process(self, captured: FloatAudio, captured_from: float) -> FloatAudio:
        """``captured``, whose first sample was recorded at ``captured_from``."""
        rate = self._played_rate
        for samples, ends_at in self.played.take_blocks():
            self.timeline.add(samples, rate, ends_at - samples.size / rate)
        reference = self.timeline.take(captured_from + REFERENCE_LEAD_S, captured.size)
        if reference is not None:
            self._quiet_samples = 0
        elif self._quiet_samples < QUIET_FEED_SAMPLES:
            # silence between sentences, block for block: the two streams stay in step
            # (the canceller's own padding is per frame, and would shift what follows)
            self._quiet_samples += captured.size
            reference = np.zeros(captured.size, dtype=np.float32)
        if reference is not None:
            self.echo.add_reference(reference)
        return self.echo.process(captured)
