"""One SpeechSynthesizer contract, run against the fake and the real Piper adapter."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from app.adapters.fakes import FakeSynthesizer
from app.core.ports import SpeechSynthesizer

SHORT = "Hello there."
LONG = "Hello there. It is a lovely morning, and I am very happy to talk with you today."


# Kokoro's model is downloaded on users' machines, not shipped on PyPI: it joins the
# contract run only where kokoro-onnx is installed and HANASU_KOKORO_MODEL /
# HANASU_KOKORO_VOICES name the files (see test_engine_errors for its error handling).
_KOKORO_FILES = (os.environ.get("HANASU_KOKORO_MODEL"), os.environ.get("HANASU_KOKORO_VOICES"))
_ENGINES = [
    pytest.param("fake"),
    pytest.param("real", marks=pytest.mark.slow),  # Piper, the embedded default
    pytest.param("espeak"),  # the fallback voice; instant, so not marked slow
]
if importlib.util.find_spec("kokoro_onnx") and all(_KOKORO_FILES):
    _ENGINES.append(pytest.param("kokoro", marks=pytest.mark.slow))


@pytest.fixture(scope="module", params=_ENGINES)
def tts(request: pytest.FixtureRequest) -> SpeechSynthesizer:
    if request.param == "fake":
        return FakeSynthesizer()
    if request.param == "espeak":
        from app.adapters.espeak_tts import EspeakSynthesizer

        return EspeakSynthesizer()
    if request.param == "kokoro":
        from app.adapters.kokoro_tts import KokoroSynthesizer

        model, voices = _KOKORO_FILES
        assert model and voices
        return KokoroSynthesizer(Path(model), Path(voices))
    from app.adapters.piper_tts import PiperSynthesizer

    return PiperSynthesizer()


def test_output_is_mono_float32_and_audible(tts: SpeechSynthesizer) -> None:
    audio = tts.synthesize(SHORT)
    assert isinstance(tts.sample_rate, int) and tts.sample_rate >= 8_000
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert float(np.sqrt(np.mean(np.square(audio)))) > 0.01
    assert float(np.max(np.abs(audio))) <= 1.0 + 1e-6


def test_duration_grows_with_the_text(tts: SpeechSynthesizer) -> None:
    short = len(tts.synthesize(SHORT)) / tts.sample_rate
    long = len(tts.synthesize(LONG)) / tts.sample_rate
    assert 0.2 < short < 3.0
    ratio = long / short
    assert 2.5 < ratio < 12.0, f"{short:.2f} s vs {long:.2f} s"


@pytest.mark.slow
def test_real_piper_is_intelligible_to_the_real_recognizer(
    normalise: Callable[[str], str],
) -> None:
    from app.adapters.piper_tts import PiperSynthesizer
    from app.adapters.resample import resample
    from app.adapters.whisper_asr import WhisperRecognizer

    tts = PiperSynthesizer()
    assert tts.sample_rate == 22_050
    speech = resample(tts.synthesize("Hello, I am your voice companion."), tts.sample_rate, 16_000)
    assert "voice companion" in normalise(WhisperRecognizer().transcribe(speech))


@pytest.mark.slow
def test_real_piper_yields_one_chunk_per_sentence() -> None:
    from app.adapters.piper_tts import PiperSynthesizer

    chunks = list(PiperSynthesizer().chunks("First sentence. Second sentence."))
    assert len(chunks) == 2
    assert all(c.dtype == np.float32 and c.size > 0 for c in chunks)


def test_espeak_fallback_is_intelligible(normalise: Callable[[str], str]) -> None:
    from app.adapters.espeak_tts import EspeakSynthesizer
    from app.adapters.resample import resample
    from app.adapters.whisper_asr import WhisperRecognizer

    tts = EspeakSynthesizer(rate=140)
    speech = resample(tts.synthesize("Hello, I am your voice companion."), tts.sample_rate, 16_000)
    assert "voice companion" in normalise(WhisperRecognizer().transcribe(speech))
