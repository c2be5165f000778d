"""The recognizer told the companion's name (with voices enrolled) writes it as said."""

from __future__ import annotations

import pytest

from tests.support.voices import voice_b


@pytest.mark.slow
def test_whisper_told_the_name_keeps_it() -> None:
    """tiny.en hears eSpeak's "Tess, what time is it?" as "test, ..." unless told the name."""
    from app.adapters.whisper_asr import WhisperRecognizer

    asr = WhisperRecognizer()
    said = voice_b("Tess, what time is it?")
    asr.expect_names(["Tess"])
    assert asr.transcribe(said).startswith("Tess")
    asr.expect_names([])
    assert asr.hotwords is None
