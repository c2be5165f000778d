"""Kokoro-82M TTS through kokoro-onnx: the production default voice (24 kHz, natural).

The model and voices files are downloaded on the user's machine (they are not on PyPI),
so both paths are checked up front and a missing file is reported by name. Kokoro's
English phonemes come from espeak-ng (espeakng-loader), which works offline: kokoro-onnx
points phonemizer at espeakng-loader's library and data itself, and nothing is downloaded
at first use (checked with the network blocked in tests/adapters/test_kokoro_real.py).

``voice`` and ``speed`` are plain attributes the UI changes between replies (a persona
switch), so ``synthesize`` checks them each time: an unknown voice falls back to the one
loaded with, and the speed is clamped to what Kokoro accepts.

Japanese and Mandarin are not phonemized by espeak: a ``phonemizer`` (app.adapters.cjk_g2p)
turns the text into misaki's phonemes, which kokoro-onnx takes as they are
(``is_phonemes=True``). ``for_language`` makes such a voice on the model already loaded.
"""

from __future__ import annotations

import logging
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from app.adapters.errors import EngineLoadError, first_line
from app.core.events import FloatAudio

log = logging.getLogger(__name__)

KOKORO_SAMPLE_RATE = 24_000
MIN_SPEED, MAX_SPEED = 0.5, 2.0  # kokoro-onnx rejects anything outside this range


class KokoroSynthesizer:
    """Text -> mono float32 audio at 24 kHz with one of Kokoro's voices."""

    def __init__(
        self,
        model_path: Path,
        voices_path: Path,
        voice: str = "af_heart",
        speed: float = 1.0,
        lang: str = "en-us",
        phonemizer: Callable[[str], str] | None = None,
    ) -> None:
        model_path, voices_path = Path(model_path), Path(voices_path)
        if not model_path.is_file():
            raise EngineLoadError(f"Kokoro model not found: {model_path}")
        if not voices_path.is_file():
            raise EngineLoadError(f"Kokoro voices file not found: {voices_path}")
        if not zipfile.is_zipfile(voices_path):  # voices-v1.0.bin is a numpy .npz archive
            raise EngineLoadError(
                f"Kokoro voices file {voices_path} is corrupt (not an .npz archive)"
            )
        try:
            from kokoro_onnx import Kokoro
        except ImportError as exc:
            raise EngineLoadError(
                "Kokoro voices need the kokoro-onnx package (pip install kokoro-onnx)"
            ) from exc
        try:
            self._kokoro: Any = Kokoro(os.fspath(model_path), os.fspath(voices_path))
        except Exception as exc:
            raise EngineLoadError(
                f"Kokoro model {model_path} could not be loaded: {first_line(exc)}"
            ) from exc
        self._voices_name = voices_path.name
        self._setup(voice, speed, lang, phonemizer)
        log.info("Kokoro %s loaded, voice %s", model_path.name, voice)

    def _setup(
        self, voice: str, speed: float, lang: str, phonemizer: Callable[[str], str] | None
    ) -> None:
        voices = list(self._kokoro.get_voices())
        if voice not in voices:
            raise EngineLoadError(
                f"Kokoro voices file {self._voices_name} has no voice {voice!r} "
                f"(e.g. {', '.join(voices[:8])})"
            )
        self._voices = frozenset(voices)
        self._loaded_voice = voice
        self.voice = voice
        self.speed = speed
        self.lang = lang
        self._phonemizer = phonemizer
        self.sample_rate = KOKORO_SAMPLE_RATE

    def for_language(
        self, voice: str, phonemizer: Callable[[str], str], speed: float = 1.0
    ) -> KokoroSynthesizer:
        """Another voice on this same loaded model, reading ``phonemizer``'s phonemes
        (a Japanese or Mandarin voice beside the English one, without a second model)."""
        other = object.__new__(KokoroSynthesizer)
        other._kokoro = self._kokoro
        other._voices_name = self._voices_name
        other._setup(voice, speed, self.lang, phonemizer)
        return other

    def _create(self, text: str, voice: str, speed: float) -> FloatAudio:
        if self._phonemizer is None:
            audio, _rate = self._kokoro.create(text, voice=voice, speed=speed, lang=self.lang)
        else:
            phonemes = self._phonemizer(text).strip()
            if not phonemes:
                return np.zeros(0, dtype=np.float32)
            audio, _rate = self._kokoro.create(
                phonemes, voice=voice, speed=speed, is_phonemes=True
            )
        return np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)

    def phonemes(self, text: str) -> str:
        """The phonemes Kokoro reads for ``text`` (IPA from espeak-ng, or misaki's for
        Japanese and Mandarin), for the mouth's shapes."""
        if self._phonemizer is not None:
            return self._phonemizer(text)
        return str(self._kokoro.tokenizer.phonemize(text, self.lang))

    @property
    def voices(self) -> tuple[str, ...]:
        """The voice ids the loaded voices file has (the persona editor lists them)."""
        return tuple(sorted(self._voices))

    def synthesize_as(self, text: str, voice: str, speed: float) -> FloatAudio:
        """``text`` in another voice, for a preview, leaving the current voice alone."""
        if voice not in self._voices:
            raise ValueError(f"Kokoro has no voice {voice!r}")
        speed = min(MAX_SPEED, max(MIN_SPEED, float(speed)))
        return self._create(text, voice, speed)

    def synthesize(self, text: str) -> FloatAudio:
        """All of ``text`` as one mono float32 array at ``sample_rate``."""
        if not text.strip():
            return np.zeros(0, dtype=np.float32)
        voice = self.voice
        if voice not in self._voices:
            log.warning("Kokoro has no voice %r: using %s", voice, self._loaded_voice)
            voice = self.voice = self._loaded_voice
        speed = min(MAX_SPEED, max(MIN_SPEED, float(self.speed)))
        try:
            return self._create(text, voice, speed)
        except ValueError as exc:
            # Voice and speed are valid here, so this is text with nothing to say
            # (e.g. "\u266a"): silence, not a failed reply.
            log.warning("Kokoro skipped a sentence of %d characters: %s", len(text),
                        first_line(exc))
            log.debug("the sentence Kokoro skipped: %r", text[:40])
            return np.zeros(0, dtype=np.float32)

