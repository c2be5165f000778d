"""Helpers for end-to-end tests of the real app with real audio on a machine without a
sound card: a private PulseAudio server and an X server (the caller's DISPLAY or a private
Xvfb), both from ``bench/virtual_audio.py``, a growing raw recording of the virtual
speaker, and polling.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.virtual_audio import Pulse, Xvfb, stop_process

__all__ = ["Pulse", "Xvfb", "stop_process"]  # re-exported: the tests import them from here

ROOT = Path(__file__).resolve().parents[2]

RATE = 16_000
"""Rate of the speaker recording (PulseAudio resamples the sink's monitor to it)."""
FRAME = RATE // 50
"""20 ms analysis frames."""


def missing_tools(*names: str) -> list[str]:
    return [name for name in names if shutil.which(name) is None]


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.2) -> bool:
    """Poll ``predicate`` until it is true (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


# ---- the speaker recording -------------------------------------------------------------


class SpeakerRecording:
    """``parec`` of the ``spk`` sink's monitor as raw 16 kHz mono s16le, readable while it
    grows (a WAV written by parec has no valid length until parec exits)."""

    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.path = path
        self._out = path.open("wb")
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            [
                "parec",
                "-d",
                "spk.monitor",
                "--format=s16le",
                f"--rate={RATE}",
                "--channels=1",
                "--latency-msec=20",
            ],
            stdout=self._out,
            stderr=subprocess.DEVNULL,
            env=env,
        )

    def samples(self) -> np.ndarray:
        data = self.path.read_bytes()
        data = data[: len(data) // 2 * 2]
        return np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0

    def stop(self) -> None:
        stop_process(self.proc, signal.SIGINT, timeout=5)
        self._out.close()

    def write_wav(self, path: Path) -> Path:
        import soundfile

        soundfile.write(str(path), self.samples(), RATE, subtype="PCM_16")
        return path


def frame_rms(samples: np.ndarray) -> np.ndarray:
    """RMS of each whole 20 ms frame."""
    count = samples.size // FRAME
    if count == 0:
        return np.zeros(0, dtype=np.float32)
    frames = samples[: count * FRAME].reshape(count, FRAME)
    return np.sqrt(np.mean(frames * frames, axis=1))


def loud_seconds(samples: np.ndarray, threshold: float = 0.01) -> float:
    return float(np.count_nonzero(frame_rms(samples) > threshold)) * FRAME / RATE


def trailing_silence_seconds(samples: np.ndarray, threshold: float = 0.01) -> float:
    """How long the recording has been quiet at its end (all of it if never loud)."""
    rms = frame_rms(samples)
    loud = np.flatnonzero(rms > threshold)
    quiet_frames = rms.size if loud.size == 0 else rms.size - 1 - int(loud[-1])
    return quiet_frames * FRAME / RATE
