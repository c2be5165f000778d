"""Shared fixtures for the adapter contract tests: test speech, model paths, tiny GGUFs.

Speech is made with Debian's espeak-ng (``-v en-us -s 140``: the voice Whisper tiny.en
transcribes reliably) and resampled to 16 kHz with the app's own resampler. Tiny
GGUF models are built, not trained (see ``gguf_builders``), so their replies are known.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from app.core.events import FloatAudio
from tests.adapters.gguf_builders import write_tiny_llama

FOX_TEXT = "the quick brown fox jumps over the lazy dog"


def espeak_speech(text: str, path: Path) -> FloatAudio:
    """``text`` spoken by espeak-ng, mono float32 at 16 kHz with 0.3 s of silence around it."""
    import soundfile as sf

    from app.adapters.resample import resample

    exe = shutil.which("espeak-ng")
    if exe is None:
        pytest.fail("espeak-ng is needed to make test speech (apt-get install espeak-ng)")
    subprocess.run([exe, "-v", "en-us", "-s", "140", "-w", str(path), text], check=True)
    data, rate = sf.read(str(path), dtype="float32", always_2d=False)
    speech = resample(data, int(rate), 16_000)
    pad = np.zeros(4_800, dtype=np.float32)
    return np.concatenate([pad, speech, pad])


@pytest.fixture(scope="session")
def fox_speech(tmp_path_factory: pytest.TempPathFactory) -> FloatAudio:
    return espeak_speech(FOX_TEXT, tmp_path_factory.mktemp("speech") / "fox.wav")


@pytest.fixture(scope="session")
def tiny_llama_gguf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield write_tiny_llama(tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf")


def _normalise(text: str) -> str:
    kept = "".join(ch if ch.isalnum() or ch.isspace() else " " for ch in text.lower())
    return " ".join(kept.split())


@pytest.fixture(scope="session")
def gguf_writer() -> Callable[..., Path]:
    """``write_tiny_llama`` for tests that need a variant (another template, none, ...)."""
    return write_tiny_llama


@pytest.fixture(scope="session")
def normalise() -> Callable[[str], str]:
    """Lowercase words without punctuation, for lenient transcript comparison."""
    return _normalise


@pytest.fixture(scope="session")
def fox_text() -> str:
    return FOX_TEXT
