"""Acoustic echo cancellation: remove the assistant's own voice from the microphone.

On laptop speakers the microphone hears whatever the assistant says; without this the
VAD would take the assistant's voice for the user and it would interrupt itself. The
canceller gets two streams from one worker thread, interleaved: ``add_reference`` with
what the speaker played since the last call, then ``process`` with what the microphone
captured since.

``WebRtcEchoCanceller`` is WebRTC's AEC3 through the ``livekit`` wheel
(``livekit.rtc.AudioProcessingModule``). That API takes exactly 10 ms frames of 16-bit
PCM (160 samples at 16 kHz), so both streams are cut into such frames here; what is
left over waits for the next call. To return as many samples as it is given, the
processed stream runs a constant 159 samples (just under 10 ms) behind the input; AEC3
itself adds about 128 samples (8 ms) more, so the output is about 18 ms behind in all.
Noise suppression and automatic gain control stay off: they hurt speech recognition. The
high-pass filter is on (AEC3 turns it on anyway). When less reference than capture has
arrived (the speaker was silent and nothing was reported as played), silence is fed as
reference, so the two streams stay aligned in time.

While nothing has been played for ``IDLE_BYPASS_FRAMES`` (1 s) of capture there is no
echo left to remove, so AEC3 is not run at all (it was most of the idle listener's CPU):
the capture comes out unprocessed, delayed by the same ``LATENCY + AEC3_DELAY`` samples so
the stream stays continuous in time. The next ``add_reference`` resumes processing; AEC3
keeps what it learnt about the echo path, since it simply sees no frames meanwhile.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from app.adapters.errors import EngineLoadError, first_line
from app.core.events import FloatAudio

SAMPLE_RATE = 16_000
FRAME_SIZE = 160  # 10 ms at 16 kHz: the only frame length the AudioProcessingModule takes
LATENCY = FRAME_SIZE - 1  # samples the framing delays the output (enough for any remainder)
# Stream delay hint in ms (output buffer + input buffer). AEC3 finds the real delay itself:
# with bulk delays of 40-250 ms the hint (none, 60 or 120) changed the ERLE by under 1 dB.
DEFAULT_DELAY_MS = 60
AEC3_DELAY = 128
"""Samples AEC3 itself delays the capture stream (measured with livekit 1.2.1)."""
IDLE_BYPASS_FRAMES = 100
"""Capture frames (1 s) after the last reference before AEC3 is bypassed."""

_INT16_SCALE = 32768.0


def _to_int16(audio: FloatAudio) -> npt.NDArray[np.int16]:
    scaled = np.clip(audio * _INT16_SCALE, -32768.0, 32767.0)
    pcm: npt.NDArray[np.int16] = np.rint(scaled).astype(np.int16)
    return pcm


def _as_float32(audio: FloatAudio) -> FloatAudio:
    arr = np.asarray(audio, dtype=np.float32)
    if arr.ndim != 1:
        raise ValueError(f"expected 1-D mono audio, got shape {arr.shape}")
    return arr


class NullEchoCanceller:
    """No echo cancellation: ``process`` returns its input (file runs, or when disabled)."""

    def add_reference(self, played: FloatAudio) -> None:
        """Ignored."""

    def process(self, captured: FloatAudio) -> FloatAudio:
        """``captured`` itself, as mono float32."""
        return _as_float32(captured)

    def reset(self) -> None:
        """Nothing to forget."""


class WebRtcEchoCanceller:
    """WebRTC AEC3 (via ``livekit.rtc``) on 16 kHz mono float32, any block length.

    ``process`` returns exactly as many samples as it is given; the framing delays them
    by a constant ``latency_samples`` (159), so the first call's output starts with that
    many zeros, and AEC3 adds about 128 samples of its own. Not thread-safe: call
    ``add_reference`` and ``process`` from one thread.
    """

    sample_rate = SAMPLE_RATE
    latency_samples = LATENCY
    output_delay_samples = LATENCY + AEC3_DELAY
    """How far the processed stream runs behind the captured one (framing + AEC3)."""

    def __init__(self, delay_ms: int | None = DEFAULT_DELAY_MS) -> None:
        """``delay_ms``: stream delay hint for AEC3, or None to leave it to AEC3's estimator."""
        try:
            from livekit import rtc
        except Exception as exc:  # ImportError, or the bundled native library failing
            raise EngineLoadError(
                "echo cancellation needs the 'livekit' package (WebRTC audio processing), "
                f"which could not be loaded: {first_line(exc)}"
            ) from exc
        self._rtc: Any = rtc
        self._delay_ms = delay_ms
        # One int16 buffer per direction, shared with an AudioFrame the APM edits in place.
        self._render_buf = bytearray(FRAME_SIZE * 2)
        self._capture_buf = bytearray(FRAME_SIZE * 2)
        self._render_pcm = np.frombuffer(self._render_buf, dtype=np.int16)
        self._capture_pcm = np.frombuffer(self._capture_buf, dtype=np.int16)
        try:
            self._render_frame: Any = rtc.AudioFrame(self._render_buf, SAMPLE_RATE, 1, FRAME_SIZE)
            self._capture_frame: Any = rtc.AudioFrame(self._capture_buf, SAMPLE_RATE, 1, FRAME_SIZE)
            self._apm: Any = self._new_apm()
        except Exception as exc:
            raise EngineLoadError(
                f"WebRTC echo cancellation (livekit) could not start: {first_line(exc)}"
            ) from exc
        self._reset_buffers()

    def _new_apm(self) -> Any:
        apm = self._rtc.AudioProcessingModule(
            echo_cancellation=True,
            noise_suppression=False,
            high_pass_filter=True,
            auto_gain_control=False,
        )
        if self._delay_ms is not None:
            apm.set_stream_delay_ms(int(self._delay_ms))
        return apm

    def _reset_buffers(self) -> None:
        self._render_rest = np.zeros(0, dtype=np.float32)
        self._capture_rest = np.zeros(0, dtype=np.float32)
        self._output: list[FloatAudio] = [np.zeros(LATENCY, dtype=np.float32)]
        self._render_frames = 0
        self._capture_frames = 0
        self._idle_frames = 0  # capture frames since the last reference
        self._raw_tail = np.zeros(AEC3_DELAY, dtype=np.float32)  # for the bypass delay

    def reset(self) -> None:
        """Forget all adaptation and buffered audio (a fresh AEC3 instance)."""
        self._apm = self._new_apm()
        self._reset_buffers()

    def add_reference(self, played: FloatAudio) -> None:
        """Queue what the speaker just played (16 kHz mono float32, any length)."""
        data = _as_float32(played)
        if data.size == 0:
            return
        if self.bypassed:  # AEC3 saw no frames meanwhile: nothing to pad or carry over
            self._render_frames = self._capture_frames
            self._render_rest = np.zeros(0, dtype=np.float32)
        self._idle_frames = 0
        if self._render_rest.size:
            data = np.concatenate([self._render_rest, data])
        n_frames = data.size // FRAME_SIZE
        for i in range(n_frames):
            self._render_pcm[:] = _to_int16(data[i * FRAME_SIZE : (i + 1) * FRAME_SIZE])
            self._feed_render()
        self._render_rest = data[n_frames * FRAME_SIZE :].copy()

    def _feed_render(self) -> None:
        self._apm.process_reverse_stream(self._render_frame)
        self._render_frames += 1

    @property
    def bypassed(self) -> bool:
        """Nothing played for a while: ``process`` passes the capture through (delayed)."""
        return self._idle_frames >= IDLE_BYPASS_FRAMES

    def process(self, captured: FloatAudio) -> FloatAudio:
        """``captured`` with the echo removed: same length, ``LATENCY`` samples behind."""
        data = _as_float32(captured)
        if data.size == 0:
            return np.zeros(0, dtype=np.float32)
        data_all = np.concatenate([self._capture_rest, data]) if self._capture_rest.size else data
        n_frames = data_all.size // FRAME_SIZE
        if n_frames and self.bypassed:
            # AEC3's own delay, kept up by hand: the last AEC3_DELAY captured samples
            # come out first, so the stream continues seamlessly from AEC3's output.
            delayed = np.concatenate([self._raw_tail, data_all[: n_frames * FRAME_SIZE]])
            self._output.append(delayed[: n_frames * FRAME_SIZE])
            self._raw_tail = delayed[n_frames * FRAME_SIZE :].copy()
            self._capture_frames += n_frames
            self._capture_rest = data_all[n_frames * FRAME_SIZE :].copy()
            return self._take(data.size)
        for i in range(n_frames):
            if self._render_frames <= self._capture_frames:
                # Nothing was reported as played for this stretch: the speaker was silent.
                self._render_pcm[:] = 0
                self._feed_render()
            self._capture_pcm[:] = _to_int16(data_all[i * FRAME_SIZE : (i + 1) * FRAME_SIZE])
            self._apm.process_stream(self._capture_frame)
            self._capture_frames += 1
            self._idle_frames += 1
            self._output.append(self._capture_pcm.astype(np.float32) / _INT16_SCALE)
        if n_frames:
            processed = data_all[: n_frames * FRAME_SIZE]
            if processed.size >= AEC3_DELAY:
                self._raw_tail = processed[-AEC3_DELAY:].copy()
            else:
                self._raw_tail = np.concatenate([self._raw_tail, processed])[-AEC3_DELAY:]
        self._capture_rest = data_all[n_frames * FRAME_SIZE :].copy()
        return self._take(data.size)

    def _take(self, n: int) -> FloatAudio:
        joined = np.concatenate(self._output) if len(self._output) > 1 else self._output[0]
        out, rest = joined[:n], joined[n:]
        self._output = [rest]
        return np.ascontiguousarray(out, dtype=np.float32)

