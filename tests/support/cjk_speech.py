"""Japanese and Mandarin test speech (Kokoro, offline) and the character error rate.

The speaker, the sentences and the error rate live in bench/cjk_speech.py (``hanasu
bench asr --language`` uses them too); here the Kokoro model is joined in the test's
temporary folder, and a missing or damaged package fails the test with the pip line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cjk_speech import (
    ENGLISH,
    JAPANESE,
    MANDARIN,
    CjkSpeaker,
    cer,
    cer_chars,
    kokoro_files,
)

__all__ = ["ENGLISH", "JAPANESE", "MANDARIN", "cer", "cer_chars", "kokoro_speaker"]


def kokoro_speaker(folder: Path) -> CjkSpeaker:
    """A speaker whose model is joined (and checked) in ``folder``."""
    try:
        model, voices = kokoro_files(folder)
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    return CjkSpeaker(model, voices)
