"""A copy of what the microphone hears, for reading a voice print in: while a tap is set the
listener hands it every block (after echo cancellation) instead of listening for turns, so
the companion neither answers nor is interrupted by the sentences read to it."""

from __future__ import annotations

import threading

import numpy as np

from app.core.events import FloatAudio
from app.core.ports import PIPELINE_SAMPLE_RATE


class InputTap:
    def __init__(self, max_s: float = 120.0) -> None:
        self._limit = int(max_s * PIPELINE_SAMPLE_RATE)
        self._blocks: list[FloatAudio] = []
        self._size = 0
        self._lock = threading.Lock()

    def put(self, samples: FloatAudio) -> None:
        """From the listener's thread; past ``max_s`` waiting, blocks are dropped."""
        with self._lock:
            if self._size + samples.size <= self._limit:
                self._blocks.append(samples.astype(np.float32, copy=True))
                self._size += samples.size

    def take(self) -> FloatAudio:
        """Everything heard since the last take (16 kHz mono)."""
        with self._lock:
            blocks, self._blocks, self._size = self._blocks, [], 0
        return np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.float32)
