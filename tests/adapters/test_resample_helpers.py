"""The resampling and format helpers the pipeline uses at every audio boundary."""

from __future__ import annotations

import numpy as np
import pytest

from app.adapters.resample import resample, to_mono_float32


def tone(rate: int, seconds: float = 1.0, hz: float = 440.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


@pytest.mark.parametrize(("src", "dst"), [(48_000, 16_000), (22_050, 48_000), (44_100, 16_000)])
def test_resample_keeps_duration_and_pitch(src: int, dst: int) -> None:
    out = resample(tone(src), src, dst)
    assert out.dtype == np.float32 and out.ndim == 1
    assert abs(len(out) - dst) <= 2
    spectrum = np.abs(np.fft.rfft(out))
    peak_hz = np.argmax(spectrum) * dst / len(out)
    assert abs(peak_hz - 440.0) < 3.0


def test_same_rate_is_a_no_op_copy_in_float32() -> None:
    audio = tone(16_000)
    out = resample(audio, 16_000, 16_000)
    np.testing.assert_array_equal(out, audio)


def test_to_mono_scales_int16_and_averages_channels() -> None:
    stereo = np.array([[32767, -32768], [16384, 16384], [0, 0]], dtype=np.int16)
    mono = to_mono_float32(stereo)
    assert mono.dtype == np.float32
    np.testing.assert_allclose(mono, [-0.5 / 32768, 0.5, 0.0], atol=1e-6)


def test_to_mono_handles_unsigned_8_bit() -> None:
    np.testing.assert_allclose(
        to_mono_float32(np.array([0, 128, 255], dtype=np.uint8)), [-1.0, 0.0, 127 / 128]
    )


def test_resample_rejects_bad_rates() -> None:
    with pytest.raises(ValueError):
        resample(tone(16_000), 0, 16_000)
