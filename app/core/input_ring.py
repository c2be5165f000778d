"""The microphone's side of the audio callback: a preallocated ring, so the callback only copies.

A device's input callback runs on a real-time thread: it must not wait for a lock, allocate
a buffer or build an event. ``InputRing.write`` copies the block into preallocated storage
and moves two counters (samples and blocks), each written by the callback alone and moved
only after the data is in place; the listener's thread takes everything written so far with
``take`` at its own pace. Mirrors ``output_ring.OutputRing`` on the speaker side.
"""

from __future__ import annotations

import numpy as np

from app.core.events import FloatAudio


class InputRing:
    """Single-producer (the capture callback), single-consumer (the listener) ring of
    float32 samples, with the pipeline-clock time of each block's last sample."""

    def __init__(self, capacity_samples: int, max_blocks: int) -> None:
        self._samples = np.zeros(capacity_samples, dtype=np.float32)
        self._capacity = capacity_samples
        self._times = np.zeros(max_blocks, dtype=np.float64)
        self._ends = np.zeros(max_blocks, dtype=np.int64)
        """Each block's end in samples: the consumer takes whole blocks only."""
        self._max_blocks = max_blocks
        self._written = 0
        """Samples written so far (the producer's counter)."""
        self._blocks_written = 0
        self._read = 0
        """Samples taken so far (the consumer's counter)."""
        self._blocks_read = 0
        self.dropped = 0
        """Blocks refused because the listener fell that far behind (counted, never raised)."""

    def backlog_blocks(self) -> int:
        return self._blocks_written - self._blocks_read

    def empty(self) -> bool:
        return self._blocks_written == self._blocks_read

    def write(self, samples: FloatAudio, captured_at: float) -> bool:
        """Producer side: copy ``samples`` (its last one captured at ``captured_at`` on the
        pipeline clock). No lock, no allocation beyond slice views, no event. False (and
        counted) when the ring is full: a stalled listener loses the newest audio, never
        corrupts what it has not read yet."""
        count = int(samples.shape[0])
        if count == 0:
            return True
        if (count > self._capacity - (self._written - self._read)
                or self._blocks_written - self._blocks_read >= self._max_blocks):
            self.dropped += 1
            return False
        start = self._written % self._capacity
        first = min(count, self._capacity - start)
        self._samples[start:start + first] = samples[:first]
        self._samples[:count - first] = samples[first:count]
        slot = self._blocks_written % self._max_blocks
        self._times[slot] = captured_at
        self._ends[slot] = self._written + count
        self._written += count
        self._blocks_written += 1  # published last: the block's samples and times are in
        return True

    def take_blocks(self) -> list[tuple[FloatAudio, float]]:
        """Consumer side: every block written so far, each as a new array with the capture
        time of its last sample, oldest first (a burst keeps each block's own time)."""
        blocks = self._blocks_written  # one read: every block below it is complete
        out: list[tuple[FloatAudio, float]] = []
        while self._blocks_read < blocks:
            slot = self._blocks_read % self._max_blocks
            end = int(self._ends[slot])
            out.append((self._copy(self._read, end), float(self._times[slot])))
            self._read = end
            self._blocks_read += 1
        return out

    def _copy(self, begin: int, end: int) -> FloatAudio:
        count = end - begin
        start = begin % self._capacity
        first = min(count, self._capacity - start)
        out = np.empty(count, dtype=np.float32)
        out[:first] = self._samples[start:start + first]
        out[first:] = self._samples[:count - first]
        return out

    def take(self) -> tuple[FloatAudio, float] | None:
        """Consumer side: every sample written so far, as one new array, with the capture
        time of its last sample; None when nothing is waiting."""
        blocks = self._blocks_written  # one read: every block below it is complete
        if blocks == self._blocks_read:
            return None
        last = (blocks - 1) % self._max_blocks
        end = int(self._ends[last])
        captured_at = float(self._times[last])
        out = self._copy(self._read, end)
        self._read = end
        self._blocks_read = blocks
        return out, captured_at
