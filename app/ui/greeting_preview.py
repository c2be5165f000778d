"""The persona editor's "Say the greeting": what the running voice engine offers (its
voices, a preview synthesizer, a note for the user), synthesized on a worker thread and
played on the speaker the app uses; it says why when it cannot (no voice loaded yet, no
audio device).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)

KOKORO_VOICES = (
    "af_heart", "af_alloy", "af_aoede", "af_bella", "af_jessica", "af_kore", "af_nicole",
    "af_nova", "af_river", "af_sarah", "af_sky", "am_adam", "am_echo", "am_eric",
    "am_fenrir", "am_liam", "am_michael", "am_onyx", "am_puck", "bf_alice", "bf_emma",
    "bf_isabella", "bf_lily", "bm_daniel", "bm_fable", "bm_george", "bm_lewis",
)
"""Kokoro v1.0's English voices, listed when no Kokoro voice is loaded to ask."""

Synthesize = Callable[[str, str, float], tuple[np.ndarray, int]]
"""(text, voice, speed) -> (samples, sample rate)."""
Play = Callable[[np.ndarray, int], None]


def voice_engine(tts: object | None) -> tuple[Sequence[str], Synthesize | None, str]:
    """What the running voice engine offers the editor: its voices, a preview synthesizer
    and a note for the user (why the list is what it is)."""
    if tts is None:
        return KOKORO_VOICES, None, "The voice is still loading: the preview works once it is."
    voices = getattr(tts, "voices", None)
    synthesize_as = getattr(tts, "synthesize_as", None)
    if isinstance(voices, tuple) and voices and callable(synthesize_as):

        def kokoro(text: str, voice: str, speed: float) -> tuple[np.ndarray, int]:
            samples = synthesize_as(text, voice, speed)
            return samples, int(getattr(tts, "sample_rate", 24_000))

        return voices, kokoro, ""
    synthesize = getattr(tts, "synthesize", None)
    if not callable(synthesize):
        return KOKORO_VOICES, None, "This voice engine cannot preview."

    def plain(text: str, _voice: str, _speed: float) -> tuple[np.ndarray, int]:
        return synthesize(text), int(getattr(tts, "sample_rate", 16_000))

    note = ("The voice in use has one speaker: the Kokoro voice chosen here is used "
            "when Kokoro is installed.")
    return KOKORO_VOICES, plain, note


def sounddevice_player(output_device: str | None) -> Play:
    """Plays on the app's speaker with sounddevice (a second stream; PortAudio mixes)."""

    def play(samples: np.ndarray, rate: int) -> None:
        import sounddevice as sd

        device: Any = output_device
        sd.play(samples, rate, device=device, blocking=True)

    return play


class GreetingPreview(QObject):
    """Synthesizes and plays on a worker thread; ``status`` comes back on the GUI thread."""

    status = Signal(str)

    def __init__(self, synthesize: Synthesize | None, play: Play | None,
                 note: str = "", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._synthesize, self._play, self.note = synthesize, play, note
        self._thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, text: str, voice: str, speed: float) -> None:
        if not text.strip():
            self.status.emit("Write a greeting first.")
            return
        if self._synthesize is None:
            self.status.emit(self.note or "No voice is loaded yet.")
            return
        if self.busy:
            return
        self.status.emit("Speaking…")
        self._thread = threading.Thread(target=self._run, args=(text, voice, speed),
                                        name="greeting-preview", daemon=True)
        self._thread.start()

    def join(self, timeout: float = 10.0) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self, text: str, voice: str, speed: float) -> None:
        assert self._synthesize is not None
        try:
            samples, rate = self._synthesize(text, voice, speed)
        except Exception as exc:
            log.warning("greeting preview failed: %s", exc)
            self.status.emit(f"Could not synthesize the greeting: {exc}")
            return
        if self._play is None:
            self.status.emit("No audio output: audio is turned off for this run.")
            return
        try:
            self._play(samples, rate)
        except Exception as exc:
            log.warning("greeting preview could not play: %s", exc)
            self.status.emit(f"No audio device to play on: {exc}")
            return
        self.status.emit(f"Said it ({samples.size / max(rate, 1):.1f} s).")
