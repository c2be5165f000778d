"""One SpeechRecognizer contract, run against the fake and the real Whisper adapter.

For the fake, the contract is only "'' for silence, its script for speech", so it is
scripted with the clip's sentence; the real model must actually hear it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from app.adapters.fakes import FakeRecognizer
from app.core.events import FloatAudio
from app.core.ports import SpeechRecognizer


@pytest.fixture(
    scope="module",
    params=[pytest.param("fake"), pytest.param("real", marks=pytest.mark.slow)],
)
def recognizer(request: pytest.FixtureRequest, fox_text: str) -> SpeechRecognizer:
    if request.param == "fake":
        return FakeRecognizer([fox_text])
    from app.adapters.whisper_asr import WhisperRecognizer

    return WhisperRecognizer()


def test_transcribes_speech(
    recognizer: SpeechRecognizer, fox_speech: FloatAudio, normalise: Callable[[str], str]
) -> None:
    text = normalise(recognizer.transcribe(fox_speech))
    # Lenient: tiny.en may say "jump" for "jumps".
    assert "quick brown fox" in text
    assert "lazy dog" in text


def test_silence_gives_empty_text(recognizer: SpeechRecognizer) -> None:
    assert recognizer.transcribe(np.zeros(16_000, dtype=np.float32)) == ""


def test_empty_audio_gives_empty_text(recognizer: SpeechRecognizer) -> None:
    assert recognizer.transcribe(np.zeros(0, dtype=np.float32)) == ""


@pytest.mark.slow
def test_real_whisper_picks_english_and_cpu_int8_here() -> None:
    from app.adapters.whisper_asr import WhisperRecognizer

    asr = WhisperRecognizer()
    assert asr.language == "en"  # the embedded model is tiny.en
    if asr.device == "cpu":
        assert asr.compute_type == "int8"
    else:
        assert asr.compute_type == "float16"
