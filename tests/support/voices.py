"""Speech in two different voices for the voice-print tests: voice A is Piper's "joe" (a
man, from PyPI), voice B is eSpeak NG's British "f2" variant (a woman, Debian's espeak-ng)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from app.core.events import FloatAudio

RATE = 16_000
ENROLMENT = (
    "The quick brown fox jumps over the lazy dog.",
    "Please call Stella and ask her to bring these things with her from the store.",
    "We also need a small plastic snake and a big toy frog for the kids.",
)
_piper: object | None = None


def voice_a(text: str) -> FloatAudio:
    global _piper
    from app.adapters.piper_tts import PiperSynthesizer

    if _piper is None:
        _piper = PiperSynthesizer()
    assert isinstance(_piper, PiperSynthesizer)
    audio = _piper.synthesize(text)
    return soxr.resample(audio, _piper.sample_rate, RATE).astype(np.float32)


def voice_b(text: str) -> FloatAudio:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "b.wav"
        subprocess.run(["espeak-ng", "-v", "en-gb+f2", "-s", "140", "-w", str(path), text],
                       check=True)
        audio, rate = sf.read(path, dtype="float32")
    return soxr.resample(audio, rate, RATE).astype(np.float32)


def silence(seconds: float) -> FloatAudio:
    return np.zeros(int(seconds * RATE), dtype=np.float32)
