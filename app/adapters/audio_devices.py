"""The real microphone and speaker, through PortAudio (sounddevice), surviving unplugs.

Threads and why:

* PortAudio's callbacks run on its real-time threads and only copy: the input callback
  into a preallocated ring (``InputRing``; a full ring counts an overflow), the output
  callback out of the prepared buffer (``read_into``). No lock, no allocation of audio,
  no event, no logging, no resampling there.
* A microphone that runs at 16 kHz needs no resampling: given ``push_now`` (the
  pipeline's ``push_audio``, itself a copy into the listener's ring), the input callback
  hands the block straight over and the forwarding thread sleeps. At another rate the
  forwarding thread (``capture_forward``) resamples the capture ring to 16 kHz and calls
  ``push``.
* A watchdog thread notices a stream that stopped, errored or stalled, reports it through
  ``on_status``, and keeps reopening (rescanning PortAudio's device list, falling back to
  the system default device) until audio flows again. It also logs the callback
  counters (``device_trouble``) and pauses an idle speaker stream (``speaker_pacer``).
Device listing and picking: ``device_list``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from app.adapters.capture_forward import CaptureForwarder
from app.adapters.device_list import (
    AudioDeviceError,
    DeviceInfo,
    DeviceList,
    DeviceStatus,
    list_devices,
    mark_running,
    opened_message,
)
from app.adapters.device_list import extra_settings as _extra_settings
from app.adapters.device_list import pick as _pick
from app.adapters.device_list import reinitialise as _rescan
from app.adapters.device_list import scan as _scan
from app.adapters.device_list import sounddevice_module as _sounddevice
from app.adapters.device_list import supports_rate as _supports_rate
from app.adapters.device_trouble import CallbackTrouble, DeviceCounters
from app.adapters.speaker_pacer import SpeakerPacer
from app.core.events import FloatAudio
from app.core.input_ring import InputRing
from app.core.ports import PIPELINE_SAMPLE_RATE

__all__ = ["AudioDeviceError", "DeviceAudio", "DeviceCounters", "DeviceInfo", "DeviceList",
           "DeviceStatus", "list_devices"]

log = logging.getLogger(__name__)

OUTPUT_PAUSE_AFTER_S = 2.0
"""An idle speaker stream is paused after this long (replies a few seconds apart keep it
running); None or 0 in ``DeviceAudio`` keeps it always open."""
BLOCK_SECONDS = 0.02
"""Output block length: playback stops within one block on barge-in."""
CAPTURE_BLOCK_SECONDS = 0.032
"""Input block length: one VAD frame (512 samples at 16 kHz), so every capture callback
wakes the listener exactly once per frame it can use (fewer wake-ups when idle)."""


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
        self._pull = pull
        self._read_into = read_into
        """A prepared buffer's reader: the callback then only copies into the device."""
        self._push_now = push_now
        """``push`` that never blocks and copies: the input callback may call it itself."""
        self._pacer = SpeakerPacer(output_idle, pause_output_after)
        self._on_status = on_status
        self._watchdog_interval = watchdog_interval
        self._retry_interval = retry_interval
        self._stall_timeout = stall_timeout
        self._ring_blocks = queue_blocks
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
        self._trouble = CallbackTrouble()
        self._in_calls = 0
        self._out_calls = 0
        self._seen_calls = (0, 0, time.monotonic())
        self._forwarder = CaptureForwarder(push, self._trouble, CAPTURE_BLOCK_SECONDS / 2)
        self.capture_rate = PIPELINE_SAMPLE_RATE
        self._block = 1
        self._capture = InputRing(1, 1)
        self._prepare_capture(PIPELINE_SAMPLE_RATE)

    # ---- public -----------------------------------------------------------------------

    @property
    def counters(self) -> DeviceCounters:
        return self._trouble.snapshot()

    @property
    def forward_rounds(self) -> int:
        """Times the forwarding thread looked for captured blocks (tests, diagnostics)."""
        return self._forwarder.rounds

    @property
    def running(self) -> bool:
        return bool(self._threads)

    @property
    def output_paused(self) -> bool:
        return self._pacer.paused

    @property
    def output_pauses(self) -> int:
        """Times the speaker stream was paused for want of audio (tests, diagnostics)."""
        return self._pacer.pauses

    def wake_output(self) -> None:
        """Audio is coming: start the speaker stream again if it was paused. Thread-safe
        (the output buffer's writer calls it when it wakes with audio to play)."""
        with self._lock:
            if self._pacer.wake(self._out_stream):
                self._seen_calls = (self._in_calls, self._out_calls, time.monotonic())

    def start(self) -> None:
        """Open both devices (or report why not) and start the helper threads."""
        if self._threads:
            return
        _sounddevice()  # the one error worth raising: nothing can ever work without it
        self._stop = threading.Event()
        self._last_status = None
        mark_running(self, True)
        with self._lock:
            self._open()
        self._threads = [
            threading.Thread(target=self._forwarder.run, name="audio-forward", daemon=True,
                             args=(self._stop, lambda: (self._capture, self.capture_rate),
                                   self._callback_pushes)),
            threading.Thread(target=self._watch, args=(self._stop,), name="audio-watchdog",
                             daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Close both streams and end the helper threads; safe to call twice."""
        self._stop.set()
        self._forwarder.wake()
        for thread in self._threads:
            if thread is not threading.current_thread():  # stop() from on_status
                thread.join(timeout=5.0)
        self._threads = []
        with self._lock:
            self._close_streams()
            self._healthy = False
        mark_running(self, False)

    # ---- real-time callbacks (PortAudio threads) --------------------------------------

    def _prepare_capture(self, rate: int) -> None:
        """A fresh capture ring for a stream at ``rate`` (before the stream opens)."""
        self.capture_rate = rate
        self._block = max(1, int(rate * CAPTURE_BLOCK_SECONDS))
        self._capture = InputRing(self._block * self._ring_blocks * 2, self._ring_blocks)
        self._forwarder.wake()

    def _callback_pushes(self) -> bool:
        """The input callback hands its blocks to the pipeline itself (``_input_callback``)."""
        return self._push_now is not None and self.capture_rate == PIPELINE_SAMPLE_RATE

    def _input_callback(self, indata: Any, frames: int, _time: Any, status: Any) -> None:
        self._in_calls += 1
        if status and status.input_overflow:
            self._trouble.input_overflows += 1
        push_now = self._push_now
        if push_now is not None and self.capture_rate == PIPELINE_SAMPLE_RATE:
            try:
                push_now(indata[:, 0])
            except Exception:
                self._trouble.push_errors += 1  # counted (and logged by the watchdog), never raised
            return
        if not self._capture.write(indata[:frames, 0], 0.0):
            self._trouble.queue_overflows += 1

    def _output_callback(self, outdata: Any, frames: int, _time: Any, status: Any) -> None:
        self._out_calls += 1
        if status and status.output_underflow:
            self._trouble.output_underflows += 1
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
            self._trouble.pull_errors += 1  # never let an exception abort the stream
            outdata.fill(0)

    # ---- watchdog thread ------------------------------------------------------------

    def _watch(self, stop: threading.Event) -> None:
        while not stop.wait(self._watchdog_interval):
            self._trouble.log_changes()
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
                    self._trouble.reopens += 1
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
        if self._out_stream is None or not (self._pacer.paused or self._out_stream.active):
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
        """The watchdog's turn to pause an idle speaker stream (or restart a busy one)."""
        if self._pacer.pace(self._out_stream):
            self._seen_calls = (self._in_calls, self._out_calls, time.monotonic())

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
        self._report(DeviceStatus(True, opened_message(
            mic, self.input_device if mic_missing else None,
            speaker, self.output_device if speaker_missing else None)))

    def _open_input(self, sd: ModuleType, mic: DeviceInfo) -> None:
        rate = PIPELINE_SAMPLE_RATE
        if not _supports_rate(sd, mic.index, rate):
            rate = mic.default_rate
        self._prepare_capture(rate)
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
        self._pacer.forget()
