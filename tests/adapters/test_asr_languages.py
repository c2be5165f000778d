"""Hearing Japanese, Mandarin and English with the real models (tiny.en + multilingual base).

Speech is made by the tests (Kokoro for Japanese and Mandarin, eSpeak for English; see
bench/cjk_speech.py). 22 sentences per language with numbers, names, mixed
kana/kanji and questions must come back with a character error rate of 15 % or less,
through the short-window path, with the language told right among the allowed ones.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.adapters.multilingual_asr import LanguageAwareRecognizer, load_multilingual_whisper
from app.core.events import FloatAudio
from tests.adapters.conftest import espeak_speech
from tests.support.cjk_speech import ENGLISH, JAPANESE, MANDARIN, cer, kokoro_speaker

pytestmark = pytest.mark.slow

MAX_CER = 0.15
TRADITIONAL_ONLY = set("這書點號氣電們會開門風車長歲錢圖館問請說語時個來過對學習")


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[str, FloatAudio]]]:
    folder = tmp_path_factory.mktemp("cjk-speech")
    speaker = kokoro_speaker(folder)
    return {
        "ja": [(text, speaker.speak(text, "ja")) for text in JAPANESE],
        "zh": [(text, speaker.speak(text, "zh")) for text in MANDARIN],
        "en": [
            (text, espeak_speech(text, folder / f"en{i}.wav")) for i, text in enumerate(ENGLISH)
        ],
    }


@pytest.fixture(scope="module")
def asr() -> LanguageAwareRecognizer:
    from app.adapters.whisper_asr import WhisperRecognizer

    return LanguageAwareRecognizer(WhisperRecognizer(), load_multilingual_whisper)


def _hear_all(
    asr: LanguageAwareRecognizer, clips: list[tuple[str, FloatAudio]]
) -> tuple[list[tuple[str, str]], list[str | None], list[str]]:
    pairs, languages, paths = [], [], []
    for text, audio in clips:
        pairs.append((text, asr.transcribe(audio)))
        languages.append(asr.last_language)
        paths.append(str(getattr(asr.active, "last_path", "")))
    return pairs, languages, paths


@pytest.mark.parametrize("language", ["ja", "zh"])
def test_each_language_is_heard_within_15_percent_cer_on_the_short_window(
    asr: LanguageAwareRecognizer,
    clips: dict[str, list[tuple[str, FloatAudio]]],
    language: str,
) -> None:
    asr.set_languages([language])
    assert asr.multilingual_loaded and asr.active.language == language  # pinned
    pairs, languages, paths = _hear_all(asr, clips[language])
    error = cer(pairs)
    assert error <= MAX_CER, (error, [p for p in pairs if cer([p]) > 0])
    assert languages == [language] * len(pairs)
    assert paths.count("short") >= 0.8 * len(paths), paths  # the speed path, not 30 s redos
    if language == "zh":
        written = "".join(heard for _, heard in pairs)
        assert not TRADITIONAL_ONLY & set(written), written  # Simplified for a Mandarin persona


def test_the_language_is_detected_among_the_allowed_ones(
    asr: LanguageAwareRecognizer, clips: dict[str, list[tuple[str, FloatAudio]]]
) -> None:
    asr.set_languages(["en", "ja", "zh"])  # a tutor who may hear all three
    assert asr.active.language is None and asr.active.allowed_languages == ("en", "ja", "zh")
    sample = clips["ja"][:8] + clips["zh"][:8] + clips["en"]
    expected = ["ja"] * 8 + ["zh"] * 8 + ["en"] * len(clips["en"])
    pairs, languages, _paths = _hear_all(asr, sample)
    assert languages == expected, list(zip(pairs, languages, strict=True))
    assert cer(pairs[:16]) <= MAX_CER


def test_a_pinned_language_is_used_even_for_other_speech(
    asr: LanguageAwareRecognizer, clips: dict[str, list[tuple[str, FloatAudio]]]
) -> None:
    asr.set_languages(["ja"])
    text = asr.transcribe(clips["zh"][0][1])  # Mandarin speech to a Japanese-only persona
    assert asr.last_language == "ja" and text.strip()
    asr.set_languages(["zh"])
    asr.transcribe(clips["zh"][0][1])
    assert asr.last_language == "zh"


def test_english_only_uses_the_english_model_and_loads_nothing_else(
    clips: dict[str, list[tuple[str, FloatAudio]]], normalise: Callable[[str], str]
) -> None:
    from app.adapters.whisper_asr import WhisperRecognizer

    def must_not_load() -> WhisperRecognizer:
        pytest.fail("the multilingual model was loaded for an English-only persona")

    english = WhisperRecognizer()
    asr = LanguageAwareRecognizer(english, must_not_load)
    asr.set_languages(["en-US"])
    assert asr.active is english and not english.multilingual  # tiny.en
    for text, audio in clips["en"]:
        assert normalise(asr.transcribe(audio)) == normalise(text)
        assert asr.last_language == "en" and english.last_path == "short"
    assert not asr.multilingual_loaded


def test_the_app_gets_the_language_aware_recognizer() -> None:
    from app.engines import EngineChoice, build_engines

    engines = build_engines(EngineChoice(llm=None))
    assert isinstance(engines.asr, LanguageAwareRecognizer)
