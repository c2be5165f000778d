"""One VoiceActivity contract, run against the fake and the real Silero adapter."""

from __future__ import annotations

import time

import numpy as np
import pytest

from app.adapters.fakes import FakeVoiceActivity
from app.core.events import FloatAudio
from app.core.ports import VoiceActivity


@pytest.fixture(
    scope="module",
    params=[pytest.param("fake"), pytest.param("real", marks=pytest.mark.slow)],
)
def vad(request: pytest.FixtureRequest) -> VoiceActivity:
    if request.param == "fake":
        return FakeVoiceActivity()
    from app.adapters.silero_vad import SileroVad

    return SileroVad()


def frames(audio: FloatAudio, size: int) -> list[FloatAudio]:
    return [audio[i : i + size] for i in range(0, len(audio) - size + 1, size)]


def probabilities(vad: VoiceActivity, audio: FloatAudio) -> list[float]:
    vad.reset()
    return [vad.probability(f) for f in frames(audio, vad.frame_size)]


def test_frame_size_is_32ms_at_16k(vad: VoiceActivity) -> None:
    assert vad.frame_size == 512


def test_speech_is_detected(vad: VoiceActivity, fox_speech: FloatAudio) -> None:
    probs = probabilities(vad, fox_speech)
    assert max(probs) > 0.5
    assert sum(p > 0.5 for p in probs) >= 10  # 10 frames = 0.32 s of a 2.7 s sentence


def test_silence_is_not_speech(vad: VoiceActivity) -> None:
    probs = probabilities(vad, np.zeros(16_000 * 2, dtype=np.float32))
    assert max(probs) < 0.5


def test_probabilities_are_in_range_and_reset_restarts_the_stream(
    vad: VoiceActivity, fox_speech: FloatAudio
) -> None:
    first = probabilities(vad, fox_speech[:16_000])
    again = probabilities(vad, fox_speech[:16_000])
    assert all(0.0 <= p <= 1.0 for p in first)
    assert again == pytest.approx(first, abs=1e-5)


# ---- real only --------------------------------------------------------------------------
# The fake is an energy detector, so noise at speech level triggers it by design; only
# the real model is expected to tell noise from speech.


@pytest.mark.slow
def test_real_vad_ignores_moderate_white_noise() -> None:
    from app.adapters.silero_vad import SileroVad

    rng = np.random.default_rng(0)
    noise = (rng.standard_normal(16_000 * 3) * 0.05).astype(np.float32)
    assert max(probabilities(SileroVad(), noise)) < 0.5


@pytest.mark.slow
def test_real_vad_costs_under_1ms_per_frame(fox_speech: FloatAudio) -> None:
    from app.adapters.silero_vad import SileroVad

    vad = SileroVad()
    chunks = frames(fox_speech, vad.frame_size)
    vad.probability(chunks[0])  # first run allocates
    started = time.perf_counter()
    for chunk in chunks:
        vad.probability(chunk)
    per_frame_ms = (time.perf_counter() - started) / len(chunks) * 1000
    assert per_frame_ms < 1.0, f"{per_frame_ms:.3f} ms per frame"


def test_real_vad_rejects_wrong_frame_size() -> None:
    from app.adapters.silero_vad import SileroVad

    with pytest.raises(ValueError, match="512"):
        SileroVad().probability(np.zeros(480, dtype=np.float32))
