"""Audio files as if they were a microphone and a speaker, on one real-time timeline.

``FileMicrophone`` releases the input block by block at the pace of the wall clock (a
block becomes available once it has been "recorded"), then keeps feeding silence.
``FileSpeaker`` reads the pipeline's output ring (``VoicePipeline.device_output``) at the
pace of the wall clock, one 10 ms block ahead, exactly as a device callback does: sample k
of the recording is what was playing k/sr seconds after the start, through the same
feeder and ring the app's speaker uses, so ``run`` and ``bench`` measure what users hear.
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from app.adapters.resample import resample, to_mono_float32
from app.core.events import FloatAudio
from app.core.ports import PIPELINE_SAMPLE_RATE, Clock, PushAudio

ReadInto = Callable[[FloatAudio, float], int]
"""A device callback's source: fills the array it is given, told when its first sample is
heard (``OutputRing.read_into``)."""


class AudioFileError(ValueError):
    """The input file is missing, unreadable, not audio or empty (one-line message)."""


class OutputPathError(ValueError):
    """An output path cannot be written (one-line message), found before any work is done."""


def check_output_path(path: Path, option: str = "--output") -> None:
    """Fail now, not after a long run, if ``path`` cannot be written.

    Refuses a folder, a missing parent folder and any place the file cannot be created
    (``/proc``, a read-only disk, no permission): the only sure test is to create it, so an
    absent file is created and removed again, and an existing one is opened for appending
    (which changes nothing).
    """
    if path.is_dir():
        raise OutputPathError(f"{option} {path} is a folder; give a file name")
    parent = path.parent
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise OutputPathError(f"{option} {path}: the folder {parent} {what}")
    existed = path.exists()
    try:
        with path.open("ab"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        if exc.errno == errno.ENOENT:  # the folder exists (checked above): /proc and the like
            reason = f"{parent} does not take new files"
        raise OutputPathError(f"{option} {path} cannot be written: {reason}") from exc
    if not existed:
        path.unlink(missing_ok=True)


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


class EchoRoom:
    """Simulates loudspeakers the microphone can hear: the speaker track comes back
    delayed, quieter and smeared by a short room reverberation."""

    def __init__(self, speaker: FileSpeaker, delay_s: float = 0.08, gain: float = 0.5) -> None:
        self.speaker = speaker
        self.delay_s = delay_s
        self.gain = gain
        taps = np.arange(int(0.06 * PIPELINE_SAMPLE_RATE), dtype=np.float32)
        rng = np.random.default_rng(7)
        response = np.exp(-taps / (0.012 * PIPELINE_SAMPLE_RATE)) * rng.uniform(0.2, 1.0, taps.size)
        response[0] = 1.0
        self.response = (response / np.sum(np.abs(response)) * 4.0).astype(np.float32)

    def echo(self, start: int, count: int) -> FloatAudio:
        """Echo heard in pipeline samples [start, start + count)."""
        rate = PIPELINE_SAMPLE_RATE
        history = self.response.size
        begin_s = (start - history) / rate - self.delay_s
        end_s = (start + count) / rate - self.delay_s
        played = self.speaker.played_between(begin_s, end_s)
        if not played.any():
            return np.zeros(count, dtype=np.float32)
        at_rate = resample(played, self.speaker.sample_rate, rate)
        wet = np.convolve(at_rate, self.response)[: at_rate.size]
        tail = wet[-count:] if wet.size >= count else np.pad(wet, (count - wet.size, 0))
        return (self.gain * tail).astype(np.float32)


class FileMicrophone:
    def __init__(
        self, audio: FloatAudio, clock: Clock, block: int = 512, room: EchoRoom | None = None
    ) -> None:
        self.audio = audio
        self.clock = clock
        self.block = block
        self.room = room
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
            if self.room is not None:
                chunk = chunk + self.room.echo(start, self.block)
            push(chunk, due)  # the file is the microphone: its timeline is the clock
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
        self._track = np.zeros(sample_rate * 60, dtype=np.float32)
        self._written = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, read_into: ReadInto) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(read_into,), name="file-spk", daemon=True
        )
        self._thread.start()

    def _run(self, read_into: ReadInto) -> None:
        while not self._stop.wait(self.tick_s):
            self._catch_up(read_into)
        self._catch_up(read_into)

    def _catch_up(self, read_into: ReadInto) -> None:
        due = int(
            (self.clock.now() + self.tick_s) * self.sample_rate
        )  # one block ahead, as a device buffer
        if due > self._written:
            if due > self._track.size:
                grown = np.zeros(max(due, 2 * self._track.size), dtype=np.float32)
                grown[: self._written] = self._track[: self._written]
                self._track = grown
            # silence where nothing is ready; sample k of the track is heard at k / rate
            read_into(self._track[self._written : due], self._written / self.sample_rate)
            self._written = due

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(2)

    def recording(self) -> FloatAudio:
        return self._track[: self._written].copy()

    def played_between(self, start_s: float, end_s: float) -> FloatAudio:
        """What was played in [start_s, end_s); zeros for times not played (yet)."""
        track, written = self._track, self._written
        first, last = int(start_s * self.sample_rate), int(end_s * self.sample_rate)
        out = np.zeros(max(0, last - first), dtype=np.float32)
        lo, hi = max(first, 0), min(last, written)
        if hi > lo:
            out[lo - first : hi - first] = track[lo:hi]
        return out
