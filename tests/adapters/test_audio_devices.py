"""The real-device adapter against a PulseAudio virtual microphone and speaker.

``tests/support/pulse.sh`` starts a private PulseAudio server (null sinks ``spk`` and
``micfeed``, source ``vmic`` = what is played into ``micfeed``). Speech goes in with
``paplay -d micfeed``; what the app plays is recorded with ``parec -d spk.monitor``.
PortAudio is re-initialised after the server is up, so it does not matter whether
something imported sounddevice earlier in the session. Waiting is by polling with a
deadline: these tests run against a real audio clock.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import app.adapters.audio_devices as audio_devices
from app.adapters.audio_devices import (
    AudioDeviceError,
    DeviceAudio,
    DeviceList,
    DeviceStatus,
    list_devices,
)
from app.core.events import FloatAudio

PULSE_SH = Path(__file__).resolve().parents[1] / "support" / "pulse.sh"
PULSE_DIR = "/tmp/hanasu-xdg-devtests"  # private server: other test runs cannot talk into it
OUTPUT_RATE = 24_000


# ---- helpers -----------------------------------------------------------------------


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def rms(audio: FloatAudio) -> float:
    return float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))) if audio.size else 0.0


def start_pulse() -> dict[str, str]:
    env = {**os.environ, "HANASU_PULSE_DIR": PULSE_DIR}
    done = subprocess.run(
        ["bash", str(PULSE_SH)], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    exported: dict[str, str] = {}
    for line in done.stdout.splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        exported[name] = value
    return exported


class Recorder:
    """Collects what DeviceAudio pushes and reports, from its threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.blocks: list[tuple[float, FloatAudio]] = []
        self.statuses: list[DeviceStatus] = []

    def push(self, block: FloatAudio) -> None:
        with self.lock:
            self.blocks.append((time.monotonic(), block))

    def status(self, status: DeviceStatus) -> None:
        with self.lock:
            self.statuses.append(status)

    def samples(self) -> int:
        with self.lock:
            return sum(block.size for _, block in self.blocks)

    def audio_between(self, start: float, end: float) -> FloatAudio:
        with self.lock:
            kept = [block for at, block in self.blocks if start <= at <= end]
        return np.concatenate(kept) if kept else np.zeros(0, dtype=np.float32)

    def seen(self, ok: bool, after: int = 0) -> bool:
        with self.lock:
            return any(s.ok is ok for s in self.statuses[after:])


def silence(frames: int) -> FloatAudio:
    return np.zeros(frames, dtype=np.float32)


class Tone:
    """A phase-continuous sine for ``pull`` (what a playback queue would return)."""

    def __init__(self, freq: float, rate: int, amplitude: float = 0.5) -> None:
        self.step = 2 * np.pi * freq / rate
        self.amplitude = amplitude
        self.position = 0
        self.calls = 0

    def __call__(self, frames: int) -> FloatAudio:
        self.calls += 1
        phase = self.step * (self.position + np.arange(frames))
        self.position += frames
        block: FloatAudio = (self.amplitude * np.sin(phase)).astype(np.float32)
        return block


@pytest.fixture(scope="module")
def pulse() -> Iterator[dict[str, str]]:
    for tool in ("pulseaudio", "pactl", "paplay", "parec"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is needed (apt-get install pulseaudio pulseaudio-utils)")
    exported = start_pulse()
    with pytest.MonkeyPatch.context() as mp:
        for name, value in exported.items():
            mp.setenv(name, value)
        list_devices(rescan=True)  # PortAudio only sees servers that ran when it started
        yield exported
        subprocess.run(["pactl", "exit"], capture_output=True, timeout=10)


@pytest.fixture()
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture()
def make_audio(recorder: Recorder) -> Iterator[Callable[..., DeviceAudio]]:
    made: list[DeviceAudio] = []

    def make(pull: Callable[[int], FloatAudio] = silence, **kwargs: Any) -> DeviceAudio:
        options: dict[str, Any] = {"input_device": "pulse", "output_device": "pulse"}
        options.update(kwargs)
        audio = DeviceAudio(
            options.pop("input_device"), options.pop("output_device"), OUTPUT_RATE,
            recorder.push, pull, recorder.status, **options,
        )
        made.append(audio)
        return audio

    yield make
    for audio in made:
        audio.stop()


@pytest.fixture(scope="module")
def speech_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = shutil.which("espeak-ng")
    if exe is None:
        pytest.fail("espeak-ng is needed to make test speech (apt-get install espeak-ng)")
    path = tmp_path_factory.mktemp("speech") / "speech.wav"
    text = "the quick brown fox jumps over the lazy dog"
    subprocess.run([exe, "-v", "en-us", "-s", "140", "-w", str(path), text], check=True)
    return path


# ---- with real (virtual) devices ---------------------------------------------------


@pytest.mark.slow
def test_list_devices_sees_pulse(pulse: dict[str, str]) -> None:
    devices = list_devices()
    assert "pulse" in [d.name for d in devices.inputs]
    assert "pulse" in [d.name for d in devices.outputs]
    assert sum(d.is_default for d in devices.inputs) <= 1
    assert all(d.default_rate > 0 for d in devices.inputs + devices.outputs)


@pytest.mark.slow
@pytest.mark.parametrize("device_rate", ["16k", "16k-from-the-callback", "device-default"])
def test_microphone_pushes_speech_at_16k(
    pulse: dict[str, str],
    recorder: Recorder,
    make_audio: Callable[..., DeviceAudio],
    speech_wav: Path,
    monkeypatch: pytest.MonkeyPatch,
    device_rate: str,
) -> None:
    if device_rate == "device-default":  # a device that refuses 16 kHz: resample ourselves
        monkeypatch.setattr(audio_devices, "_supports_rate", lambda sd, index, rate: False)
    direct = device_rate == "16k-from-the-callback"
    copying = {"push_now": lambda block: recorder.push(block.copy())} if direct else {}
    audio = make_audio(**copying)
    audio.start()
    assert recorder.statuses and recorder.statuses[-1].ok, recorder.statuses
    assert audio.capture_rate == (44_100 if device_rate == "device-default" else 16_000)

    assert wait_for(lambda: recorder.samples() > 8_000)  # streams are flowing
    quiet_from = time.monotonic()
    time.sleep(0.5)
    quiet = recorder.audio_between(quiet_from, time.monotonic())
    counted_from, counted = time.monotonic(), recorder.samples()
    played_from = time.monotonic()
    subprocess.run(["paplay", "-d", "micfeed", str(speech_wav)], check=True, timeout=30)
    played_to = time.monotonic()
    time.sleep(0.3)
    heard = recorder.audio_between(played_from, time.monotonic())

    assert all(block.dtype == np.float32 and block.ndim == 1 for _, block in recorder.blocks)
    window = 1_600  # 100 ms
    loudest = max(rms(heard[i : i + window]) for i in range(0, heard.size - window, window))
    assert loudest > 0.05
    assert loudest > 10 * max(rms(quiet), 1e-4)
    # The rate pushed is 16 kHz whatever the device runs at.
    elapsed = time.monotonic() - counted_from
    pushed_rate = (recorder.samples() - counted) / elapsed
    assert 0.8 * 16_000 < pushed_rate < 1.2 * 16_000, (pushed_rate, played_to - played_from)
    assert audio.counters.queue_overflows == 0
    # The forwarding thread polls only when it has blocks to fetch (and resample); while
    # the callback pushes by itself it sleeps (it woke 62 times a second for nothing).
    if direct:
        assert audio.forward_rounds == 0
    else:
        assert audio.forward_rounds > 20


@pytest.mark.slow
def test_speaker_plays_what_pull_returns(
    pulse: dict[str, str], make_audio: Callable[..., DeviceAudio]
) -> None:
    rate = 16_000
    recording = subprocess.Popen(
        ["parec", "-d", "spk.monitor", "--format=float32le", f"--rate={rate}", "--channels=1",
         "--latency-msec=20"],
        stdout=subprocess.PIPE,
    )
    assert recording.stdout is not None
    stdout = recording.stdout
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: stdout.read(4096), b"")))
    reader.start()

    def last_second() -> FloatAudio:
        raw = b"".join(list(chunks))
        recorded = np.frombuffer(raw[: len(raw) // 4 * 4], dtype="<f4")
        return recorded[-rate:]

    try:
        tone = Tone(440.0, OUTPUT_RATE)
        make_audio(pull=tone).start()
        # PulseAudio may start either end late; wait for a full second of the tone.
        assert wait_for(lambda: last_second().size == rate and rms(last_second()) > 0.25)
    finally:
        recording.terminate()
        recording.wait(timeout=10)
        reader.join(timeout=10)
    tail = last_second()
    assert tone.calls > 10
    assert 0.25 < rms(tail) < 0.45  # 0.5 amplitude sine: 0.354
    spectrum = np.abs(np.fft.rfft(tail * np.hanning(tail.size)))
    peak_hz = np.argmax(spectrum) * rate / tail.size
    assert abs(peak_hz - 440.0) < 5.0


def _stop_input_stream(audio: DeviceAudio, monkeypatch: pytest.MonkeyPatch) -> None:
    audio._in_stream.stop()  # as PortAudio does when the device goes away


def _probe_raises(audio: DeviceAudio, monkeypatch: pytest.MonkeyPatch) -> None:
    import sounddevice as sd

    real_probe = audio._probe
    failed = threading.Event()

    def probe() -> str | None:
        if not failed.is_set():
            failed.set()
            raise sd.PortAudioError("Unanticipated host error")
        return real_probe()

    monkeypatch.setattr(audio, "_probe", probe)


@pytest.mark.slow
@pytest.mark.parametrize("break_it", [_stop_input_stream, _probe_raises],
                         ids=["stream-inactive", "probe-raises"])
def test_watchdog_reports_failure_then_recovers(
    pulse: dict[str, str],
    recorder: Recorder,
    make_audio: Callable[..., DeviceAudio],
    monkeypatch: pytest.MonkeyPatch,
    break_it: Callable[[DeviceAudio, pytest.MonkeyPatch], None],
) -> None:
    audio = make_audio(watchdog_interval=0.1, retry_interval=0.1)
    audio.start()
    assert wait_for(lambda: recorder.samples() > 3_200)
    seen = len(recorder.statuses)
    break_it(audio, monkeypatch)
    assert wait_for(lambda: recorder.seen(False, after=seen), timeout=5)
    failure = next(s for s in recorder.statuses[seen:] if not s.ok)
    assert failure == DeviceStatus(False, "Microphone disconnected: pulse")
    assert wait_for(lambda: recorder.seen(True, after=seen), timeout=5)
    flowing = recorder.samples()
    assert wait_for(lambda: recorder.samples() > flowing + 3_200)
    assert audio.counters.reopens >= 1


@pytest.mark.slow
def test_no_microphone_is_reported_and_retried(
    pulse: dict[str, str],
    recorder: Recorder,
    make_audio: Callable[..., DeviceAudio],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_scan = audio_devices._scan
    unplugged = threading.Event()
    unplugged.set()

    def scan(sd: Any) -> DeviceList:
        devices = real_scan(sd)
        return DeviceList((), devices.outputs) if unplugged.is_set() else devices

    monkeypatch.setattr(audio_devices, "_scan", scan)
    audio = make_audio(input_device=None, watchdog_interval=0.1, retry_interval=0.1)
    audio.start()  # must not raise
    assert recorder.statuses == [DeviceStatus(False, "No microphone found")]
    time.sleep(0.3)
    assert audio.counters.reopens >= 1  # still trying
    unplugged.clear()
    assert wait_for(lambda: recorder.seen(True), timeout=5)
    assert wait_for(lambda: recorder.samples() > 3_200)


@pytest.mark.slow
def test_missing_device_falls_back_to_default(
    pulse: dict[str, str], recorder: Recorder, make_audio: Callable[..., DeviceAudio]
) -> None:
    audio = make_audio(input_device="USB Mic That Is Not Here")
    audio.start()
    assert recorder.statuses[-1].ok
    assert "USB Mic That Is Not Here not found" in recorder.statuses[-1].message
    assert wait_for(lambda: recorder.samples() > 3_200)


@pytest.mark.slow
def test_audio_server_dying_and_returning(
    pulse: dict[str, str], recorder: Recorder, make_audio: Callable[..., DeviceAudio]
) -> None:
    """The real thing: the sound server goes away (as a USB device would) and comes back."""
    audio = make_audio(watchdog_interval=0.1, retry_interval=0.2)
    audio.start()
    assert wait_for(lambda: recorder.samples() > 3_200)
    seen = len(recorder.statuses)
    subprocess.run(["pactl", "exit"], check=True, timeout=10)
    try:
        assert wait_for(lambda: recorder.seen(False, after=seen), timeout=10)
    finally:
        start_pulse()
    assert wait_for(lambda: recorder.seen(True, after=seen), timeout=15)
    flowing = recorder.samples()
    assert wait_for(lambda: recorder.samples() > flowing + 3_200)


# ---- callbacks, called directly (no devices needed) --------------------------------


def test_input_callback_never_blocks_on_a_full_ring() -> None:
    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None, silence,
                        lambda status: None, queue_blocks=4)
    frames = audio._block
    flags = SimpleNamespace(input_overflow=False)
    for value in range(4):
        audio._input_callback(np.full((frames, 1), value, np.float32), frames, None, flags)
    assert audio._capture.backlog_blocks() == 4

    started = time.perf_counter()
    audio._input_callback(np.full((frames, 1), 9, np.float32), frames, None, flags)
    assert time.perf_counter() - started < 0.05  # no waiting for space
    assert audio.counters.queue_overflows == 1

    taken = audio._capture.take()
    assert taken is not None
    kept = taken[0].reshape(4, frames)[:, 0].tolist()
    assert kept == [0.0, 1.0, 2.0, 3.0]  # the dropped block overwrote none of them


def test_a_16k_microphone_is_pushed_from_the_callback_without_the_forwarder() -> None:
    pushed: list[FloatAudio] = []
    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None, silence,
                        lambda status: None, push_now=lambda block: pushed.append(block.copy()))
    frames = audio._block
    flags = SimpleNamespace(input_overflow=False)
    for value in range(3):
        audio._input_callback(np.full((frames, 1), value, np.float32), frames, None, flags)
    assert [float(block[0]) for block in pushed] == [0.0, 1.0, 2.0]
    assert all(block.size == frames for block in pushed)
    assert audio._capture.empty()  # the forwarding thread has nothing to do

    def broken(block: FloatAudio) -> None:
        raise RuntimeError("listener gone")

    audio._push_now = broken
    audio._input_callback(np.zeros((frames, 1), np.float32), frames, None, flags)
    assert audio.counters.push_errors == 1  # counted, never raised into PortAudio


def test_a_microphone_at_another_rate_still_goes_through_the_resampler() -> None:
    pushed: list[FloatAudio] = []
    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None, silence,
                        lambda status: None, push_now=pushed.append)
    audio._prepare_capture(44_100)
    frames = audio._block
    audio._input_callback(np.zeros((frames, 1), np.float32), frames, None,
                          SimpleNamespace(input_overflow=False))
    assert not pushed
    taken = audio._capture.take()
    assert taken is not None and taken[0].size == frames  # for the forwarder to resample


def test_input_callback_counts_portaudio_overflows() -> None:
    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None, silence,
                        lambda status: None)
    frames = audio._block
    audio._input_callback(np.zeros((frames, 1), np.float32), frames, None,
                          SimpleNamespace(input_overflow=True))
    assert audio.counters.input_overflows == 1


def test_output_callback_pads_short_blocks_and_survives_pull_errors() -> None:
    replies: list[Callable[[int], FloatAudio]] = [
        lambda n: np.ones(n // 2, np.float32),
        lambda n: (_ for _ in ()).throw(RuntimeError("boom")),
    ]
    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None,
                        lambda n: replies.pop(0)(n), lambda status: None)
    out = np.full((8, 1), 5.0, np.float32)
    audio._output_callback(out, 8, None, SimpleNamespace(output_underflow=True))
    assert out[:, 0].tolist() == [1.0] * 4 + [0.0] * 4
    audio._output_callback(out, 8, None, SimpleNamespace(output_underflow=False))
    assert not out.any()
    assert audio.counters.pull_errors == 1
    assert audio.counters.output_underflows == 1


def test_missing_portaudio_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "sounddevice", None)  # import now raises ImportError
    with pytest.raises(AudioDeviceError, match="libportaudio2"):
        list_devices()
    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None, silence,
                        lambda status: None)
    with pytest.raises(AudioDeviceError):
        audio.start()
    assert not audio.running


def test_output_callback_only_copies_from_the_prepared_buffer() -> None:
    from app.core.output_ring import OutputRing

    ring = OutputRing(4_096, 16_000)
    ring.write(np.full(300, 0.25, np.float32))

    def no_pull(frames: int) -> np.ndarray:
        raise AssertionError("the callback pulled the pipeline")

    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None, no_pull,
                        lambda status: None, read_into=ring.read_into)
    outdata = np.full((441, 1), 9.0, np.float32)
    audio._output_callback(outdata, 441, None, None)
    assert np.all(outdata[:300, 0] == 0.25) and np.all(outdata[300:, 0] == 0.0)
    assert ring.starved == 1


class _FakeStream:
    """What the watchdog and ``wake_output`` use of a PortAudio stream."""

    def __init__(self) -> None:
        self.active = True
        self.calls: list[str] = []

    def abort(self) -> None:
        self.calls.append("abort")
        self.active = False

    def start(self) -> None:
        self.calls.append("start")
        self.active = True


def test_idle_speaker_stream_pauses_and_wakes_without_counting_as_a_failure() -> None:
    idle = {"now": True}
    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None, silence,
                        lambda status: None, output_idle=lambda: idle["now"],
                        pause_output_after=0.05)
    out, mic = _FakeStream(), _FakeStream()
    audio._out_stream, audio._in_stream = out, mic
    audio._pace_output()  # idle seen: the clock starts
    assert out.calls == []
    time.sleep(0.06)
    audio._pace_output()
    assert out.calls == ["abort"] and audio.output_paused
    audio._in_calls += 1  # the microphone still flows
    assert audio._probe() is None  # a paused speaker is not a disconnected one
    audio._pace_output()
    assert out.calls == ["abort"]
    idle["now"] = False
    audio.wake_output()  # the buffer's writer has audio again
    assert out.calls == ["abort", "start"] and not audio.output_paused
    audio._pace_output()  # busy: stays open, and the idle clock starts afresh
    idle["now"] = True
    audio._pace_output()
    audio._pace_output()
    assert out.calls == ["abort", "start"]


def test_a_missed_wake_is_caught_by_the_watchdog() -> None:
    idle = {"now": True}
    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None, silence,
                        lambda status: None, output_idle=lambda: idle["now"],
                        pause_output_after=0.0001)
    out = _FakeStream()
    audio._out_stream = out
    audio._pace_output()
    time.sleep(0.001)
    audio._pace_output()
    assert audio.output_paused
    idle["now"] = False  # audio came, nobody called wake_output
    audio._pace_output()
    assert out.calls == ["abort", "start"] and not audio.output_paused


def test_without_output_idle_the_speaker_never_pauses() -> None:
    audio = DeviceAudio(None, None, OUTPUT_RATE, lambda block: None, silence,
                        lambda status: None, pause_output_after=0.0001)
    out = _FakeStream()
    audio._out_stream = out
    for _ in range(3):
        audio._pace_output()
        time.sleep(0.001)
    assert out.calls == [] and not audio.output_paused


@pytest.mark.slow
def test_speaker_pauses_while_idle_and_restarts_fast(
    pulse: dict[str, str], recorder: Recorder, make_audio: Callable[..., DeviceAudio]
) -> None:
    from app.core.output_ring import OutputRing

    ring = OutputRing(4_800, 16_000)
    audio = make_audio(read_into=ring.read_into, output_idle=ring.idle,
                       pause_output_after=0.2, watchdog_interval=0.05)
    ring.on_refill = audio.wake_output
    audio.start()
    assert wait_for(lambda: recorder.samples() > 3_200)  # PulseAudio may start late
    assert wait_for(lambda: audio.output_paused, timeout=5)
    calls, samples = audio._out_calls, recorder.samples()
    time.sleep(0.4)
    assert audio._out_calls == calls  # no speaker callbacks while paused
    assert recorder.samples() > samples + 3_200  # the microphone kept flowing
    assert all(s.ok for s in recorder.statuses), recorder.statuses
    ring.writer_idle = False  # what OutputFeeder does when a reply opens
    woken = time.perf_counter()
    ring.on_refill()
    ring.write(np.full(2_400, 0.25, np.float32))
    while audio._out_calls == calls and time.perf_counter() - woken < 2:
        time.sleep(0.001)
    restart_ms = (time.perf_counter() - woken) * 1000
    print(f"speaker restart to first callback: {restart_ms:.1f} ms")
    assert restart_ms < 100
    assert wait_for(lambda: ring.buffered() == 0, timeout=2)  # it played the audio
    assert audio.output_pauses == 1
