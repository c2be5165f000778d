"""The persona editor's greeting preview on the real Kokoro model: it lists the voices the
voices file has and speaks in another voice without changing the one replies use."""

from __future__ import annotations

import numpy as np
import pytest

from app.ui.greeting_preview import voice_engine
from tests.adapters.test_kokoro_real import FirstRun, first_run, kokoro_files  # noqa: F401

pytestmark = pytest.mark.slow


def test_preview_in_another_voice_leaves_the_reply_voice(first_run: FirstRun) -> None:  # noqa: F811
    tts = first_run.tts
    assert "jf_alpha" in tts.voices and len(tts.voices) >= 2
    other = next(v for v in tts.voices if v != tts.voice)
    before = tts.voice
    voices, synthesize, note = voice_engine(tts)
    assert tuple(voices) == tts.voices and note == ""
    assert synthesize is not None
    samples, rate = synthesize("Hello there.", other, 1.2)
    assert rate == 24_000 and samples.dtype == np.float32
    assert float(np.sqrt(np.mean(samples**2))) > 0.01  # speech, not silence
    assert tts.voice == before
    with pytest.raises(ValueError, match="no voice"):
        tts.synthesize_as("Hello.", "xx_nobody", 1.0)
