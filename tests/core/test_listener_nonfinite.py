"""NaN/Inf input samples become silence before the VAD, the echo canceller and Whisper."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from app.core.endpointing import EndpointConfig, Endpointer
from app.core.events import FloatAudio, PipelineEvent, UtteranceEnded
from app.core.listener import Listener
from app.core.listener_jobs import MicBlock
from app.core.playback import PlaybackQueue

CFG = EndpointConfig(min_speech_ms=64, pause_ms=96, end_of_turn_ms=480)


class StrictVad:
    """An energy VAD that, like the real models, cannot cope with NaN: it records
    every frame it is given."""

    frame_size = 512

    def __init__(self) -> None:
        self.frames: list[FloatAudio] = []

    def probability(self, frame: FloatAudio) -> float:
        self.frames.append(frame.copy())
        rms = float(np.sqrt(np.mean(np.square(frame))))
        return 1.0 if rms > 0.01 else 0.0

    def reset(self) -> None:
        return None


class CountingEcho:
    def __init__(self) -> None:
        self.seen: list[FloatAudio] = []

    def add_reference(self, samples: FloatAudio) -> None:
        return None

    def process(self, samples: FloatAudio) -> FloatAudio:
        self.seen.append(samples.copy())
        return samples


def speech_with_nan(seconds: float, every: int = 7) -> FloatAudio:
    samples = np.full(int(seconds * 16_000), 0.3, dtype=np.float32)
    samples[::every] = np.nan
    samples[3::every * 5] = np.inf
    samples[4::every * 5] = -np.inf
    return samples


def listen(blocks: list[FloatAudio]) -> tuple[Listener, StrictVad, CountingEcho, list[object]]:
    events: list[PipelineEvent] = []
    vad, echo = StrictVad(), CountingEcho()
    listener = Listener(
        events.append,  # type: ignore[arg-type]
        vad,
        Endpointer(CFG),
        PlaybackQueue(16_000, events.append),  # type: ignore[arg-type]
        echo=echo,
    )
    for block in blocks:
        for start in range(0, block.size, 512):
            listener.handle(MicBlock(block[start : start + 512]))
    return listener, vad, echo, list(events)


def test_non_finite_samples_are_zeroed_and_counted() -> None:
    noisy = speech_with_nan(1.0)
    expected = int(np.count_nonzero(~np.isfinite(noisy)))
    listener, vad, echo, events = listen([noisy, np.zeros(16_000, dtype=np.float32)])
    assert listener.nonfinite_samples == expected
    assert all(np.isfinite(frame).all() for frame in vad.frames)
    assert all(np.isfinite(block).all() for block in echo.seen)
    # the speech around the bad samples still makes one turn
    assert sum(isinstance(e, UtteranceEnded) for e in events) == 1
    ended = next(e for e in events if isinstance(e, UtteranceEnded))
    assert np.isfinite(ended.audio).all()


def test_a_stretch_of_bad_samples_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    noisy = speech_with_nan(1.0)
    gap = np.zeros(24_000, dtype=np.float32)  # 1.5 s of clean input ends a stretch
    with caplog.at_level(logging.WARNING, logger="app.core.listener"):
        listen([noisy, gap, noisy, gap])
    lines = [r.getMessage() for r in caplog.records if "non-finite" in r.getMessage()]
    per_stretch = int(np.count_nonzero(~np.isfinite(noisy)))
    assert lines == [
        f"replaced {per_stretch} non-finite (NaN/Inf) input samples with silence, 0.00-1.00 s",
        f"replaced {per_stretch} non-finite (NaN/Inf) input samples with silence, 2.50-3.50 s",
    ]


def test_scattered_bad_samples_are_one_stretch(caplog: pytest.LogCaptureFixture) -> None:
    """A NaN every 997 samples (in most 512-sample blocks, not all): one line, not 50."""
    scattered = np.full(48_000, 0.3, dtype=np.float32)
    scattered[::997] = np.nan
    with caplog.at_level(logging.WARNING, logger="app.core.listener"):
        listener, *_ = listen([scattered, np.zeros(32_000, dtype=np.float32)])
    lines = [r.getMessage() for r in caplog.records if "non-finite" in r.getMessage()]
    assert lines == ["replaced 49 non-finite (NaN/Inf) input samples with silence, 0.00-2.99 s"]
    assert listener.nonfinite_samples == 49
