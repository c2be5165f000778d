"""The real microphone and speaker, through PortAudio (sounddevice), surviving unplugs.

Threads and why:

* PortAudio's callbacks run on its real-time threads. The input callback only copies the
  block into a preallocated slot and ``put_nowait``s it on a bounded queue (a full queue
  counts an overflow); the output callback calls ``pull`` (non-blocking by contract).
  Nothing there logs or resamples; beyond PortAudio's own wrappers it takes only the
  queue's short lock, and allocates only on the 16 kHz ``push_now`` path below (one copy
  of the block, which the listener keeps).
* A forwarding thread resamples captured audio to 16 kHz (a *stateful* soxr stream:
  resampling each 20 ms block on its own leaves clicks at every block edge) and calls
  ``push``. A microphone that runs at 16 kHz needs no resampling: then, given
  ``push_now`` (a push that never blocks, like a bounded ``put_nowait``), the input
  callback hands the block straight over and the forwarding thread sleeps. That saves a
  thread wake-up per 32 ms block, a tenth of the app's CPU while it listens in silence.
* A watchdog thread notices a stream that stopped, errored or stalled, reports it through
  ``on_status``, and keeps reopening (rescanning PortAudio's device list, falling back to
  the system default device) until audio flows again. It also logs the callback
  counters, at most once a second, and pauses the speaker stream once it has had nothing
  to play for ``pause_output_after`` seconds (see below).

An open speaker stream costs a real-time callback every 20 ms (and as many wake-ups of
the sound server's client thread) even when it only plays silence: about 1.5 % of a core
on a 2-core machine, a third of what the app spent listening in silence. So, given
``output_idle`` (the prepared buffer is empty and its writer asleep), the watchdog aborts
the output stream after ``pause_output_after`` idle seconds, and ``wake_output()`` (the
buffer's writer calls it when it has audio again) starts it again. Restarting measured
about 1 ms to the first callback on PulseAudio, and the writer wakes when a reply's
playback is *opened* (before its first synthesized audio), so first audio is not later.
``abort`` rather than ``stop``: stop drains PortAudio's buffers (1.6 s measured).

sounddevice is imported lazily so the rest of the app, and machines without PortAudio,
never pay for it. Rescanning devices means re-initialising PortAudio, which closes every
stream in the process, so it only happens while this class has its own streams closed.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

import numpy as np

from app.adapters.alsa_quiet import alsa_messages, quiet_alsa
from app.core.events import FloatAudio
from app.core.ports import PIPELINE_SAMPLE_RATE

log = logging.getLogger(__name__)

OUTPUT_PAUSE_AFTER_S = 2.0
"""An idle speaker stream is paused after this long (replies a few seconds apart keep it
running); None or 0 in ``DeviceAudio`` keeps it always open."""
BLOCK_SECONDS = 0.02
"""Output block length: playback stops within one block on barge-in."""
CAPTURE_BLOCK_SECONDS = 0.032
"""Input block length: one VAD frame (512 samples at 16 kHz), so every capture callback
wakes the listener exactly once per frame it can use (fewer wake-ups when idle)."""


class AudioDeviceError(RuntimeError):
    """Audio devices cannot be used at all (no PortAudio); one line fit for the UI."""


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    index: int
    default_rate: int
    is_default: bool


@dataclass(frozen=True)
class DeviceList:
    inputs: tuple[DeviceInfo, ...]
    outputs: tuple[DeviceInfo, ...]


@dataclass(frozen=True)
class DeviceStatus:
    """What the UI shows about the audio devices; ``ok`` False means no audio flows."""

    ok: bool
    message: str


@dataclass(frozen=True)
class DeviceCounters:
    """Trouble counted on the real-time threads (read them for metrics and tests)."""

    queue_overflows: int
    """Captured blocks dropped because the forwarding thread fell behind."""
    input_overflows: int
    """Blocks PortAudio reported as overflowed (Python was too slow to be called)."""
    output_underflows: int
    pull_errors: int
    push_errors: int
    reopens: int


def _sounddevice() -> ModuleType:
    quiet_alsa()  # before PortAudio probes the devices: alsa-lib's messages are noise
    try:
        import sounddevice
    except (OSError, ImportError) as exc:
        raise AudioDeviceError(
            "Audio devices unavailable: the PortAudio library was not found "
            "(Debian/Ubuntu: apt-get install libportaudio2)"
        ) from exc
    return cast(ModuleType, sounddevice)


def _rescan(sd: ModuleType) -> None:
    """Re-read the device list (PortAudio only enumerates at initialisation).

    This closes every open stream in the process: callers close theirs first.
    """
    if sd._initialized > 0:
        sd._terminate()
    sd._initialize()


_RUNNING_LOCK = threading.Lock()
_running: set[int] = set()
"""ids of the DeviceAudio objects between start() and stop(), whose streams a rescan
would pull from under them."""


def _default_index(sd: ModuleType, kind: str) -> int | None:
    try:
        return int(sd.query_devices(kind=kind)["index"])
    except (sd.PortAudioError, ValueError, KeyError, TypeError):
        return None


def _scan(sd: ModuleType) -> DeviceList:
    devices = sd.query_devices()
    default_in = _default_index(sd, "input")
    default_out = _default_index(sd, "output")
    inputs: list[DeviceInfo] = []
    outputs: list[DeviceInfo] = []
    for info in devices:
        index = int(info["index"])
        rate = int(info["default_samplerate"])
        if info["max_input_channels"] > 0:
            inputs.append(DeviceInfo(str(info["name"]), index, rate, index == default_in))
        if info["max_output_channels"] > 0:
            outputs.append(DeviceInfo(str(info["name"]), index, rate, index == default_out))
    return DeviceList(tuple(inputs), tuple(outputs))


def list_devices(rescan: bool = False) -> DeviceList:
    """Microphones and speakers PortAudio knows about.

    ``rescan=True`` picks up devices plugged in since PortAudio started. It closes every
    open stream in the process, so it is skipped (cached list) while a ``DeviceAudio``
    runs; that one rescans by itself whenever it reopens a device.
    """
    sd = _sounddevice()
    try:
        if rescan:
            with _RUNNING_LOCK:
                if _running:
                    log.info("not rescanning audio devices while audio runs")
                else:
                    _rescan(sd)
        return _scan(sd)
    except sd.PortAudioError as exc:
        raise AudioDeviceError(f"Could not list audio devices: {exc}") from exc


def _pick(devices: tuple[DeviceInfo, ...], wanted: str | None) -> tuple[DeviceInfo | None, bool]:
    """The wanted device by exact name, else the default, else the first; and whether
    the wanted one was missing (so the status can say it fell back)."""
    if wanted is not None:
        for device in devices:
            if device.name == wanted:
                return device, False
    fallback = next((d for d in devices if d.is_default), devices[0] if devices else None)
    return fallback, wanted is not None


def _supports_rate(sd: ModuleType, index: int, rate: int) -> bool:
    try:
        sd.check_input_settings(device=index, channels=1, dtype="float32", samplerate=rate)
    except (sd.PortAudioError, ValueError):
        return False
    return True


def _extra_settings(sd: ModuleType, index: int) -> Any:
    """WASAPI shared mode rejects rates other than the mixer's unless asked to convert."""
    try:
        hostapi = sd.query_hostapis(sd.query_devices(index)["hostapi"])["name"]
    except (sd.PortAudioError, ValueError, KeyError, TypeError):
        return None
    if "WASAPI" in str(hostapi):
        return sd.WasapiSettings(auto_convert=True)
    return None


class DeviceAudio:
    """Runs the microphone (``push`` gets 16 kHz mono float32 blocks) and the speaker
    (``pull(frames)`` is asked for ``output_rate`` mono float32) until ``stop()``.

    ``start()`` raises ``AudioDeviceError`` only when PortAudio itself is missing; every
    later problem goes to ``on_status`` (from the caller's thread during ``start()``,
    then from the watchdog thread: keep it quick and thread-safe). Use one instance per
    process: recovering re-initialises PortAudio.
    """

    def __init__(
        self,
        input_device: str | None,
        output_device: str | None,
        output_rate: int,
        push: Callable[[FloatAudio], None],
        pull: Callable[[int], FloatAudio],
        on_status: Callable[[DeviceStatus], None],
        *,
        read_into: Callable[[FloatAudio], int] | None = None,
        push_now: Callable[[FloatAudio], None] | None = None,
        output_idle: Callable[[], bool] | None = None,
        pause_output_after: float | None = OUTPUT_PAUSE_AFTER_S,
        watchdog_interval: float = 0.5,
        retry_interval: float = 1.0,
        stall_timeout: float = 2.0,
        queue_blocks: int = 64,
    ) -> None:
        self.input_device = input_device
        self.output_device = output_device
        self.output_rate = output_rate
        self._push = push
        self._pull = pull
        self._read_into = read_into
        """A prepared buffer's reader: the callback then only copies into the device."""
        self._push_now = push_now
        """``push`` that never blocks and copies: the input callback may call it itself."""
        self._output_idle = output_idle
        """Whether the speaker has nothing to play (nothing buffered, nothing coming)."""
        self._pause_after = pause_output_after if output_idle is not None else None
        self._out_paused = False
        self._idle_since: float | None = None
        self.output_pauses = 0
        """Times the speaker stream was paused for want of audio (tests, diagnostics)."""
        self._on_status = on_status
        self._watchdog_interval = watchdog_interval
        self._retry_interval = retry_interval
        self._stall_timeout = stall_timeout
        self._queue: queue.Queue[tuple[int, FloatAudio]] = queue.Queue(maxsize=queue_blocks)
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._in_stream: Any = None
        self._out_stream: Any = None
        self._in_name = ""
        self._out_name = ""
        self._healthy = False
        self._next_retry = 0.0
        self._last_status: DeviceStatus | None = None
        # Written only on the real-time threads (or the forwarder), read elsewhere.
        self._queue_overflows = 0
        self._input_overflows = 0
        self._output_underflows = 0
        self._pull_errors = 0
        self._push_errors = 0
        self._reopens = 0
        self._in_calls = 0
        self._out_calls = 0
        self._seen_calls = (0, 0, time.monotonic())
        self._logged = (0, 0, 0, 0, 0)
        self._logged_at = 0.0
        self.capture_rate = PIPELINE_SAMPLE_RATE
        self._prepare_slots(PIPELINE_SAMPLE_RATE)

    # ---- public -----------------------------------------------------------------------

    @property
    def counters(self) -> DeviceCounters:
        return DeviceCounters(
            self._queue_overflows, self._input_overflows, self._output_underflows,
            self._pull_errors, self._push_errors, self._reopens,
        )

    @property
    def running(self) -> bool:
        return bool(self._threads)

    @property
    def output_paused(self) -> bool:
        return self._out_paused

    def wake_output(self) -> None:
        """Audio is coming: start the speaker stream again if it was paused. Thread-safe
        (the output buffer's writer calls it when it wakes with audio to play)."""
        with self._lock:
            self._idle_since = None
            if self._out_paused:
                self._resume_output()

    def start(self) -> None:
        """Open both devices (or report why not) and start the helper threads."""
        if self._threads:
            return
        _sounddevice()  # the one error worth raising: nothing can ever work without it
        self._stop = threading.Event()
        self._last_status = None
        with _RUNNING_LOCK:
            _running.add(id(self))
        with self._lock:
            self._open()
        self._threads = [
            threading.Thread(target=self._forward, args=(self._stop,), name="audio-forward",
                             daemon=True),
            threading.Thread(target=self._watch, args=(self._stop,), name="audio-watchdog",
                             daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Close both streams and end the helper threads; safe to call twice."""
        self._stop.set()
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait((0, np.zeros(0, dtype=np.float32)))  # wakes the forwarder
        for thread in self._threads:
            if thread is not threading.current_thread():  # stop() from on_status
                thread.join(timeout=5.0)
        self._threads = []
        with self._lock:
            self._close_streams()
            self._healthy = False
        self._drain()
        with _RUNNING_LOCK:
            _running.discard(id(self))
        if alsa_messages():
            log.info("alsa-lib sent %d message(s), kept off the console", alsa_messages())

    # ---- real-time callbacks (PortAudio threads) --------------------------------------

    def _prepare_slots(self, rate: int) -> None:
        """Preallocated capture buffers, reused round robin. ``queue size + 2`` slots
        guarantee a slot is never rewritten while queued or being forwarded."""
        self.capture_rate = rate
        self._block = max(1, int(rate * CAPTURE_BLOCK_SECONDS))
        count = self._queue.maxsize + 2
        self._slots = [(rate, np.zeros(self._block, dtype=np.float32)) for _ in range(count)]
        self._slot = 0

    def _input_callback(self, indata: Any, frames: int, _time: Any, status: Any) -> None:
        self._in_calls += 1
        if status and status.input_overflow:
            self._input_overflows += 1
        slot = self._slots[self._slot]
        if self._push_now is not None and slot[0] == PIPELINE_SAMPLE_RATE:
            try:
                self._push_now(indata[:, 0])
            except Exception:
                self._push_errors += 1  # counted (and logged by the watchdog), never raised
            return
        if frames == slot[1].shape[0]:
            np.copyto(slot[1], indata[:, 0])
            item = slot
        else:  # PortAudio honours a fixed blocksize; this is only a safety net
            item = (slot[0], np.array(indata[:, 0], dtype=np.float32))
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self._queue_overflows += 1
            return
        if item is slot:
            self._slot = (self._slot + 1) % len(self._slots)

    def _output_callback(self, outdata: Any, frames: int, _time: Any, status: Any) -> None:
        self._out_calls += 1
        if status and status.output_underflow:
            self._output_underflows += 1
        try:
            if self._read_into is not None:
                self._read_into(outdata[:frames, 0])
                return
            block = self._pull(frames)
            n = min(frames, block.shape[0])
            outdata[:n, 0] = block[:n]
            if n < frames:
                outdata[n:, 0] = 0.0
        except Exception:
            self._pull_errors += 1  # never let an exception abort the stream
            outdata.fill(0)

    # ---- forwarding thread ----------------------------------------------------------

    def _forward(self, stop: threading.Event) -> None:
        """Each run gets its own ``stop`` so a restart cannot revive an old thread."""
        import soxr

        resampler: Any = None
        resampler_rate = 0
        while not stop.is_set():
            try:
                # a long wait: with a 16 kHz microphone this thread has nothing to do
                # (the callback pushes itself), and stop() wakes it with an empty item
                rate, samples = self._queue.get(timeout=1.0)
            except queue.Empty:
                continue
            if rate == 0:
                continue
            if rate == PIPELINE_SAMPLE_RATE:
                block = samples.copy()
            else:
                if resampler is None or resampler_rate != rate:
                    resampler = soxr.ResampleStream(
                        rate, PIPELINE_SAMPLE_RATE, 1, dtype="float32", quality="HQ"
                    )
                    resampler_rate = rate
                block = np.asarray(resampler.resample_chunk(samples), dtype=np.float32)
                if block.size == 0:
                    continue
            try:
                self._push(block)
            except Exception:
                if self._push_errors == 0:
                    log.exception("push() failed; further failures are only counted")
                self._push_errors += 1

    def _drain(self) -> None:
        with contextlib.suppress(queue.Empty):
            while True:
                self._queue.get_nowait()

    # ---- watchdog thread ------------------------------------------------------------

    def _watch(self, stop: threading.Event) -> None:
        while not stop.wait(self._watchdog_interval):
            self._log_counters()
            with self._lock:
                if stop.is_set():
                    return
                if self._healthy:
                    problem = self._check()
                    if problem is None:
                        self._pace_output()
                        continue
                    self._report(DeviceStatus(False, problem))
                    self._healthy = False
                    self._close_streams()
                    self._next_retry = time.monotonic() + self._retry_interval
                    continue
                if time.monotonic() >= self._next_retry:
                    self._reopens += 1
                    self._open()

    def _check(self) -> str | None:
        """A one-line problem, or None while both streams run."""
        try:
            failed = self._probe()
        except Exception as exc:  # PortAudioError and whatever a broken backend throws
            log.warning("audio probe failed: %s", exc)
            failed = "input"
        if failed == "input":
            return f"Microphone disconnected: {self._in_name}"
        if failed == "output":
            return f"Speaker disconnected: {self._out_name}"
        return None

    def _probe(self) -> str | None:
        """Which stream stopped, errored or stalled ("input" / "output"), if any."""
        if self._in_stream is None or not self._in_stream.active:
            return "input"
        if self._out_stream is None or not (self._out_paused or self._out_stream.active):
            return "output"
        now = time.monotonic()
        in_calls, out_calls, since = self._seen_calls
        if self._in_calls != in_calls or self._out_calls != out_calls:
            self._seen_calls = (self._in_calls, self._out_calls, now)
            return None
        if now - since > self._stall_timeout:
            return "input"
        return None

    def _pace_output(self) -> None:
        """Pause the speaker stream once it has been idle long enough; restart it if audio
        came without a ``wake_output`` (a safety net: the writer wakes it at once)."""
        if self._pause_after is None or self._pause_after <= 0 or self._output_idle is None:
            return
        stream = self._out_stream
        if stream is None:
            return
        try:
            idle = self._output_idle()
        except Exception:
            log.exception("output_idle() failed; the speaker stays open")
            idle = False
        now = time.monotonic()
        if not idle:
            self._idle_since = None
            if self._out_paused:
                self._resume_output()
            return
        if self._out_paused:
            return
        if self._idle_since is None:
            self._idle_since = now
        elif now - self._idle_since >= self._pause_after:
            try:
                stream.abort()  # not stop(): that drains PortAudio's buffers first
            except Exception as exc:
                log.warning("pausing the speaker stream failed: %s", exc)
                return
            self._out_paused = True
            self.output_pauses += 1
            log.debug("speaker stream paused (idle %.1f s)", now - self._idle_since)

    def _resume_output(self) -> None:
        """Under ``self._lock``: start the paused speaker stream."""
        stream = self._out_stream
        self._out_paused = False
        self._idle_since = None
        if stream is None:
            return
        started = time.perf_counter()
        try:
            stream.start()
        except Exception as exc:  # the watchdog sees an inactive stream and reopens it
            log.warning("restarting the speaker stream failed: %s", exc)
            return
        self._seen_calls = (self._in_calls, self._out_calls, time.monotonic())
        log.debug("speaker stream restarted in %.1f ms", (time.perf_counter() - started) * 1000)

    def _log_counters(self) -> None:
        now = time.monotonic()
        if now - self._logged_at < 1.0:
            return
        current = (self._queue_overflows, self._input_overflows, self._output_underflows,
                   self._pull_errors, self._push_errors)
        if current != self._logged:
            names = ("queue overflows", "input overflows", "output underflows",
                     "pull errors", "push errors")
            changes = [f"{name} +{new - old}" for name, new, old
                       in zip(names, current, self._logged, strict=True) if new != old]
            log.warning("audio trouble in the last second: %s", ", ".join(changes))
            self._logged = current
            self._logged_at = now

    # ---- opening and closing (under self._lock) ---------------------------------------

    def _report(self, status: DeviceStatus) -> None:
        if status == self._last_status:
            return
        self._last_status = status
        (log.info if status.ok else log.warning)("audio devices: %s", status.message)
        try:
            self._on_status(status)
        except Exception:
            log.exception("on_status() failed")

    def _fail(self, message: str) -> None:
        self._close_streams()
        self._healthy = False
        self._next_retry = time.monotonic() + self._retry_interval
        self._report(DeviceStatus(False, message))

    def _open(self) -> None:
        """Rescan devices and open both streams; on failure report it and retry later."""
        sd = _sounddevice()
        self._close_streams()
        try:
            _rescan(sd)
            devices = _scan(sd)
        except sd.PortAudioError as exc:
            self._fail(f"Audio system unavailable: {exc}")
            return
        mic, mic_missing = _pick(devices.inputs, self.input_device)
        if mic is None:
            self._fail("No microphone found")
            return
        speaker, speaker_missing = _pick(devices.outputs, self.output_device)
        if speaker is None:
            self._fail("No speaker found")
            return
        try:
            self._open_input(sd, mic)
        except (sd.PortAudioError, ValueError, OSError) as exc:
            self._fail(f"Could not open microphone {mic.name}: {exc}")
            return
        try:
            self._open_output(sd, speaker)
        except (sd.PortAudioError, ValueError, OSError) as exc:
            self._fail(f"Could not open speaker {speaker.name}: {exc}")
            return
        self._healthy = True
        self._seen_calls = (self._in_calls, self._out_calls, time.monotonic())
        parts = []
        if mic_missing:
            parts.append(f"Microphone {self.input_device} not found, using {mic.name}")
        else:
            parts.append(f"Microphone: {mic.name}")
        if speaker_missing:
            parts.append(f"speaker {self.output_device} not found, using {speaker.name}")
        else:
            parts.append(f"speaker: {speaker.name}")
        self._report(DeviceStatus(True, "; ".join(parts)))

    def _open_input(self, sd: ModuleType, mic: DeviceInfo) -> None:
        rate = PIPELINE_SAMPLE_RATE
        if not _supports_rate(sd, mic.index, rate):
            rate = mic.default_rate
        self._drain()
        self._prepare_slots(rate)
        stream = sd.InputStream(
            device=mic.index, channels=1, dtype="float32", samplerate=rate,
            blocksize=self._block, latency="low", callback=self._input_callback,
            extra_settings=_extra_settings(sd, mic.index),
        )
        self._in_stream = stream
        self._in_name = mic.name
        stream.start()

    def _open_output(self, sd: ModuleType, speaker: DeviceInfo) -> None:
        stream = sd.OutputStream(
            device=speaker.index, channels=1, dtype="float32", samplerate=self.output_rate,
            blocksize=max(1, int(self.output_rate * BLOCK_SECONDS)), latency="low",
            callback=self._output_callback,
            extra_settings=_extra_settings(sd, speaker.index),
        )
        self._out_stream = stream
        self._out_name = speaker.name
        stream.start()

    def _close_streams(self) -> None:
        for stream in (self._in_stream, self._out_stream):
            if stream is None:
                continue
            try:
                stream.close(ignore_errors=True)
            except Exception as exc:  # a vanished device may fail even to close
                log.debug("closing an audio stream failed: %s", exc)
        self._in_stream = None
        self._out_stream = None
        self._out_paused = False
        self._idle_since = None
