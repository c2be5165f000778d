"""Helpers for end-to-end tests of the real app with real audio on a machine without a
sound card: a private PulseAudio server (``pulse.sh``), an X server (the caller's DISPLAY
or a private Xvfb), a growing raw recording of the virtual speaker, and polling.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from app.cli.bench_ui import stop_process  # one helper for the benchmark and the tests

ROOT = Path(__file__).resolve().parents[2]
PULSE_SH = ROOT / "tests" / "support" / "pulse.sh"

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


# ---- PulseAudio -------------------------------------------------------------------------


class Pulse:
    """A private PulseAudio server with ``spk`` (speaker), ``micfeed`` and ``vmic``."""

    def __init__(self) -> None:
        # Short path: the server's unix socket path must fit in 108 bytes.
        self.runtime_dir = Path(tempfile.mkdtemp(prefix="hanasu-xdg-live-", dir="/tmp"))
        self.env: dict[str, str] = {}

    def start(self) -> dict[str, str]:
        env = {**os.environ, "HANASU_PULSE_DIR": str(self.runtime_dir)}
        done = subprocess.run(
            ["bash", str(PULSE_SH)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pulse.sh failed ({done.returncode}): {done.stderr}")
        for line in done.stdout.splitlines():
            if line.startswith("export ") and "=" in line:
                key, value = line[len("export ") :].split("=", 1)
                self.env[key] = value
        if "PULSE_SERVER" not in self.env:
            raise RuntimeError(f"pulse.sh printed no PULSE_SERVER: {done.stdout!r}")
        return self.env

    def child_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def stop(self) -> None:
        if self.env:
            subprocess.run(
                ["pactl", "exit"],
                env=self.child_env(),
                capture_output=True,
                timeout=15,
                check=False,
            )
        shutil.rmtree(self.runtime_dir, ignore_errors=True)


# ---- X server -----------------------------------------------------------------------------


class Xvfb:
    """The caller's DISPLAY when set (CI runs Xvfb :99), else a private Xvfb."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.display = os.environ.get("DISPLAY", "")

    def start(self) -> str:
        if self.display:
            return self.display
        read_fd, write_fd = os.pipe()
        try:
            # -displayfd: Xvfb picks a free display number and writes it to the pipe.
            self.proc = subprocess.Popen(
                [
                    "Xvfb",
                    "-displayfd",
                    str(write_fd),
                    "-screen",
                    "0",
                    "1280x800x24",
                    "-nolisten",
                    "tcp",
                ],
                pass_fds=(write_fd,),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            number = pipe.readline().decode().strip()  # EOF (b"") if Xvfb died
        if not number:
            self.stop()
            raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"
        return self.display

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


# ---- processes ----------------------------------------------------------------------------


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
