"""What the listener's inbox takes: microphone blocks (tests; the capture callback writes a
ring), mute, and end-of-turn calls."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.core.events import FloatAudio
from app.core.input_tap import InputTap
from app.core.ports import PIPELINE_SAMPLE_RATE
from app.core.turn_commands import JudgeEndOfTurn


@dataclass(frozen=True)
class MicBlock:
    samples: FloatAudio
    captured_at: float | None = None
    """When the block's last sample was captured, on the pipeline clock (None: the
    listener's own sample count is the clock, as in tests that call it directly)."""


@dataclass(frozen=True)
class SetListening:
    muted: bool
    at: float | None = None
    """When it was asked, on the pipeline clock: the microphone's blocks captured before
    it are taken as they were (None: every block waiting is)."""


@dataclass(frozen=True)
class SetTap:
    """Hand what the microphone hears to ``tap`` instead of listening for turns (None:
    listen again)."""

    tap: InputTap | None


def to_pipeline_rate(samples: FloatAudio, rate: int) -> FloatAudio:
    """Linear resampling; good enough for an echo reference, and free of native libraries."""
    if rate == PIPELINE_SAMPLE_RATE or samples.size == 0:
        return samples
    count = round(samples.size * PIPELINE_SAMPLE_RATE / rate)
    positions = np.arange(count, dtype=np.float64) * (rate / PIPELINE_SAMPLE_RATE)
    return np.interp(positions, np.arange(samples.size), samples).astype(np.float32)


ListenerJob = MicBlock | SetListening | SetTap | JudgeEndOfTurn
