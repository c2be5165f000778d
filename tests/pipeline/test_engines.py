"""Engine selection: the eSpeak fallback voice when the found voice cannot load."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from app.adapters.errors import EngineLoadError
from app.engines import EngineChoice, build_engines
from app.models.errors import ModelError


@pytest.mark.slow
def test_broken_default_voice_falls_back_to_espeak(monkeypatch: pytest.MonkeyPatch) -> None:
    piper_module = importlib.import_module("app.adapters.piper_tts")

    def broken(*args: object, **kwargs: object) -> None:
        raise EngineLoadError("voice file en_US-joe-medium.onnx is corrupt")

    monkeypatch.setattr(piper_module, "PiperSynthesizer", broken)
    notes: list[str] = []
    engines = build_engines(EngineChoice(), progress=notes.append)
    assert type(engines.tts).__name__ == "EspeakSynthesizer"
    assert any("eSpeak" in note for note in notes)
    audio = engines.tts.synthesize("Hello there.")
    assert float(np.max(np.abs(audio))) > 0.05


def test_an_explicit_voice_that_cannot_load_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "voice.onnx"
    with pytest.raises((EngineLoadError, ModelError), match=r"voice\.onnx"):
        build_engines(EngineChoice(tts=missing))
