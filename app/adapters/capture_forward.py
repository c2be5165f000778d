"""The forwarding thread of ``DeviceAudio``: captured blocks from the input callback's
ring to the pipeline at 16 kHz.

A microphone that runs at another rate fills the ring from PortAudio's callback; this
thread reads it every half block, resamples with a *stateful* soxr stream (resampling each
block on its own leaves clicks at every block edge) and calls ``push``. A microphone at
16 kHz needs none of it: the callback pushes by itself, and the thread sleeps until a
stream opens at another rate (polling every 16 ms for nothing was a quarter of the idle
CPU).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from app.adapters.device_trouble import CallbackTrouble
from app.core.events import FloatAudio
from app.core.input_ring import InputRing
from app.core.ports import PIPELINE_SAMPLE_RATE

log = logging.getLogger(__name__)


class CaptureForwarder:
    """Runs (``run``) on its own thread until its ``stop`` is set."""

    def __init__(self, push: Callable[[FloatAudio], None], trouble: CallbackTrouble,
                 poll_s: float) -> None:
        self._push = push
        self._trouble = trouble
        self._poll_s = poll_s
        self.rounds = 0
        """Times it looked for captured blocks (tests, diagnostics)."""
        self._wake = threading.Event()

    def wake(self) -> None:
        """The capture path may have changed (a stream opened, a stop): look again."""
        self._wake.set()

    def run(self, stop: threading.Event, capture: Callable[[], tuple[InputRing, int]],
            callback_pushes: Callable[[], bool]) -> None:
        """``capture()``: the current ring and its rate; each run gets its own ``stop`` so
        a restart cannot revive an old thread."""
        import soxr

        resampler: Any = None
        resampler_rate = 0
        while not stop.is_set():
            self._wake.clear()  # before the check: a wake after it ends the wait
            if callback_pushes():
                self._wake.wait()
                continue
            if stop.wait(self._poll_s):
                break
            self.rounds += 1
            ring, rate = capture()
            taken = ring.take()
            if taken is None:
                continue
            samples, _at = taken
            if rate != PIPELINE_SAMPLE_RATE:
                if resampler is None or resampler_rate != rate:
                    resampler = soxr.ResampleStream(
                        rate, PIPELINE_SAMPLE_RATE, 1, dtype="float32", quality="HQ"
                    )
                    resampler_rate = rate
                samples = np.asarray(resampler.resample_chunk(samples), dtype=np.float32)
                if samples.size == 0:
                    continue
            try:
                self._push(samples)
            except Exception:
                if self._trouble.push_errors == 0:
                    log.exception("push() failed; further failures are only counted")
                self._trouble.push_errors += 1
