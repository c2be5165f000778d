"""eSpeak NG fallback voice: robotic but instant (RTF about 0.005) and tiny.

Uses the libespeak-ng and data shipped by the ``espeakng-loader`` wheel through ctypes,
so it needs no system package. It is the voice of last resort when no neural voice
loads, and a fast, real synthesizer for tests.

libespeak-ng keeps global state, so one lock serialises every call in the process.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from pathlib import Path
from typing import Any

import numpy as np

from app.adapters.errors import EngineLoadError
from app.core.events import FloatAudio

log = logging.getLogger(__name__)

# Constants of espeak-ng's speak_lib.h.
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_POS_CHARACTER = 1
_ESPEAK_CHARS_UTF8 = 1
_ESPEAK_RATE = 1
_EE_OK = 0

_SYNTH_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)

_lock = threading.Lock()
_engine: _Engine | None = None


class _Engine:
    """The process-wide libespeak-ng handle (initialised once)."""

    def __init__(self) -> None:
        try:
            import espeakng_loader
        except ImportError as exc:
            raise EngineLoadError("the eSpeak voice needs the espeakng-loader package") from exc
        lib_path = Path(espeakng_loader.get_library_path())
        data_path = Path(espeakng_loader.get_data_path())
        try:
            lib: Any = ctypes.CDLL(str(lib_path))
        except OSError as exc:
            raise EngineLoadError(f"eSpeak library {lib_path} could not be loaded: {exc}") from exc
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetSynthCallback.argtypes = [_SYNTH_CALLBACK]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_Synchronize.restype = ctypes.c_int
        # espeak_Initialize wants the folder that *contains* espeak-ng-data.
        rate = lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 0, str(data_path.parent).encode(), 0
        )
        if rate <= 0:
            raise EngineLoadError(f"eSpeak could not start with its data in {data_path}")
        self.lib = lib
        self.sample_rate = int(rate)
        self._chunks: list[FloatAudio] = []

        def collect(wav: Any, n: int, _events: Any) -> int:
            if n > 0:
                pcm = np.ctypeslib.as_array(wav, shape=(n,)).astype(np.float32)
                self._chunks.append(pcm / 32768.0)
            return 0

        self._callback = _SYNTH_CALLBACK(collect)  # kept alive as long as the engine
        lib.espeak_SetSynthCallback(self._callback)

    def speak(self, text: str, voice: str, rate: int) -> FloatAudio:
        if self.lib.espeak_SetVoiceByName(voice.encode()) != _EE_OK:
            raise EngineLoadError(f"eSpeak has no voice {voice!r}")
        self.lib.espeak_SetParameter(_ESPEAK_RATE, rate, 0)
        data = text.encode("utf-8") + b"\0"
        self._chunks = []
        buf = ctypes.create_string_buffer(data)
        err = self.lib.espeak_Synth(
            buf, len(data), 0, _POS_CHARACTER, 0, _ESPEAK_CHARS_UTF8, None, None
        )
        if err != _EE_OK:
            raise RuntimeError(f"eSpeak synthesis failed (error {err})")
        self.lib.espeak_Synchronize()
        chunks, self._chunks = self._chunks, []
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)


def _get_engine() -> _Engine:
    global _engine
    if _engine is None:
        _engine = _Engine()
    return _engine


class EspeakSynthesizer:
    """Text -> mono float32 audio at eSpeak's rate (22.05 kHz)."""

    def __init__(self, voice: str = "en-us", rate: int = 150) -> None:
        with _lock:
            engine = _get_engine()
            if engine.lib.espeak_SetVoiceByName(voice.encode()) != _EE_OK:
                raise EngineLoadError(f"eSpeak has no voice {voice!r}")
        self.voice = voice
        self.rate = rate
        self.sample_rate: int = engine.sample_rate

    def synthesize(self, text: str) -> FloatAudio:
        """All of ``text`` as one mono float32 array at ``sample_rate``."""
        if not text.strip():
            return np.zeros(0, dtype=np.float32)
        with _lock:
            return _get_engine().speak(text, self.voice, self.rate)
