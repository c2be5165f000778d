"""Audio files as if they were a microphone and a speaker, on one real-time timeline.

``FileMicrophone`` releases the input block by block at the pace of the wall clock (a
block becomes available once it has been "recorded"), then keeps feeding silence.
``FileSpeaker`` pulls from the playback queue as a device would, so sample k of the
recording is what was playing k/sr seconds after the start.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from app.adapters.resample import resample, to_mono_float32
from app.core.events import FloatAudio
from app.core.ports import PIPELINE_SAMPLE_RATE, Clock, PullAudio, PushAudio


class AudioFileError(ValueError):
    """The input file is missing, unreadable, not audio or empty (one-line message)."""


def read_audio(path: Path, rate: int = PIPELINE_SAMPLE_RATE) -> FloatAudio:
    """Any readable audio file as mono float32 at ``rate``."""
    import soundfile

    if not path.exists():
        raise AudioFileError(f"input file not found: {path}")
    if path.is_dir():
        raise AudioFileError(f"input is a folder, not an audio file: {path}")
    try:
        data, file_rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError, TypeError) as exc:
        raise AudioFileError(f"not a readable audio file: {path} ({exc})") from exc
    if data.shape[0] == 0:
        raise AudioFileError(f"audio file is empty: {path}")
    return resample(to_mono_float32(data), int(file_rate), rate)


def write_audio(path: Path, audio: FloatAudio, rate: int) -> None:
    import soundfile

    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(str(path), np.clip(audio, -1.0, 1.0), rate, subtype="PCM_16")


class FileMicrophone:
    def __init__(self, audio: FloatAudio, clock: Clock, block: int = 512) -> None:
        self.audio = audio
        self.clock = clock
        self.block = block
        self.rate = PIPELINE_SAMPLE_RATE
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def duration(self) -> float:
        return self.audio.size / self.rate

    def start(self, push: PushAudio) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(push,), name="file-mic", daemon=True
        )
        self._thread.start()

    def _run(self, push: PushAudio) -> None:
        silence = np.zeros(self.block, dtype=np.float32)
        index = 0
        while not self._stop.is_set():
            due = (index + 1) * self.block / self.rate
            wait = due - self.clock.now()
            if wait > 0 and self._stop.wait(wait):
                return
            start = index * self.block
            chunk = self.audio[start : start + self.block]
            if chunk.size < self.block:
                chunk = np.concatenate([chunk, silence[: self.block - chunk.size]])
            push(chunk)
            index += 1

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(2)


class FileSpeaker:
    def __init__(self, sample_rate: int, clock: Clock, tick_s: float = 0.01) -> None:
        self.sample_rate = sample_rate
        self.clock = clock
        self.tick_s = tick_s
        self._blocks: list[FloatAudio] = []
        self._written = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, pull: PullAudio) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(pull,), name="file-spk", daemon=True
        )
        self._thread.start()

    def _run(self, pull: PullAudio) -> None:
        while not self._stop.wait(self.tick_s):
            self._catch_up(pull)
        self._catch_up(pull)

    def _catch_up(self, pull: PullAudio) -> None:
        due = int(
            (self.clock.now() + self.tick_s) * self.sample_rate
        )  # one block ahead, as a device buffer
        if due > self._written:
            self._blocks.append(pull(due - self._written))
            self._written = due

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(2)

    def recording(self) -> FloatAudio:
        if not self._blocks:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(self._blocks)
