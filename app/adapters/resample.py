"""Sample-format and sample-rate conversion for audio entering or leaving the pipeline.

Microphones and output devices rarely run at 16 kHz, and TTS engines each have their own
rate, so everything passes through these two helpers (soxr: high quality, fast).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from app.core.events import FloatAudio


def to_mono_float32(data: npt.NDArray[np.generic]) -> FloatAudio:
    """Mono float32 in [-1, 1] from any (frames,) or (frames, channels) array.

    Integer PCM is scaled by its type's full range; channels are averaged.
    """
    arr = np.asarray(data)
    if arr.ndim == 2:
        if np.issubdtype(arr.dtype, np.integer):
            arr = _int_to_float(arr)
        arr = arr.mean(axis=1)
    elif arr.ndim != 1:
        raise ValueError(f"expected 1-D or 2-D audio, got shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.integer):
        arr = _int_to_float(arr)
    return np.ascontiguousarray(arr, dtype=np.float32)


def _int_to_float(arr: npt.NDArray[np.generic]) -> npt.NDArray[np.float64]:
    info = np.iinfo(arr.dtype)  # type: ignore[type-var]
    if info.min == 0:  # unsigned PCM (e.g. 8-bit WAV) is centred on the midpoint
        mid = (int(info.max) + 1) / 2.0
        return (arr.astype(np.float64) - mid) / mid
    return arr.astype(np.float64) / float(-int(info.min))


def resample(audio: FloatAudio, from_rate: int, to_rate: int) -> FloatAudio:
    """``audio`` (mono float32) converted from ``from_rate`` to ``to_rate`` Hz."""
    if from_rate <= 0 or to_rate <= 0:
        raise ValueError(f"sample rates must be positive, got {from_rate} -> {to_rate}")
    mono = to_mono_float32(audio)
    if from_rate == to_rate or mono.size == 0:
        return mono
    import soxr

    out = soxr.resample(mono, from_rate, to_rate, quality="HQ")
    return np.ascontiguousarray(out, dtype=np.float32)
