"""The language-aware recognizer's choices, with fake Whisper models (fast).

Which model serves which language set, what it is told (pinned or detect among the
allowed), when the multilingual one loads, and what the app reads back: the transcript
in Simplified characters for Chinese and ``last_language``. Real models: see
test_asr_languages.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.adapters.errors import EngineLoadError
from app.adapters.multilingual_asr import LanguageAwareRecognizer, plan
from app.adapters.whisper_asr import pick_language
from app.adapters.whisper_text import collapse_cjk_loop
from app.core.events import FloatAudio

SPEECH = np.full(16_000, 0.1, np.float32)


class FakeWhisper:
    """Records what it was told when it transcribed; answers with a scripted text."""

    def __init__(self, multilingual: bool, text: str = "hello", heard: str = "en") -> None:
        self.multilingual = multilingual
        self.language: str | None = None if multilingual else "en"
        self.allowed_languages: tuple[str, ...] | None = None
        self.last_language: str | None = self.language
        self.short_window = True
        self.text, self.heard = text, heard
        self.calls: list[tuple[str | None, tuple[str, ...] | None]] = []

    def transcribe(self, audio: FloatAudio) -> str:
        self.calls.append((self.language, self.allowed_languages))
        self.last_language = self.language or self.heard
        return self.text


class Loader:
    def __init__(self, model: FakeWhisper | None = None, error: str = "") -> None:
        self.model, self.error, self.count = model, error, 0

    def __call__(self) -> FakeWhisper:
        self.count += 1
        if self.error:
            raise EngineLoadError(self.error)
        assert self.model is not None
        return self.model


def test_pick_language_takes_the_likeliest_allowed_one() -> None:
    detected = [("<|ko|>", 0.55), ("<|ja|>", 0.30), ("<|zh|>", 0.10), ("<|en|>", 0.05)]
    assert pick_language(detected, ("en", "ja", "zh")) == "ja"  # not Korean
    assert pick_language(detected, ("en", "zh")) == "zh"
    assert pick_language(detected, None) == "ko"  # no restriction: as before
    assert pick_language([("ja", 0.9), ("en", 0.1)], ("en",)) == "en"  # faster-whisper's form
    assert pick_language(detected, ("fr", "de")) == "fr"  # none listed: the main one


def test_plan_gives_base_codes_main_first() -> None:
    assert plan(["ja-JP", "cmn", "ja", "en-US"]) == (("ja", "zh", "en"), False)
    assert plan(["en-GB"]) == (("en",), True)
    assert plan([]) == (("en",), True)


def test_cjk_loops_are_cut_to_their_first_pass() -> None:
    assert collapse_cjk_loop("母は料理が上手です母は料理が上手です母は料") == "母は料理が上手です"
    assert collapse_cjk_loop("外面下雨了，记得带伞。外面下雨了，记得带") == "外面下雨了，记得带伞。"
    assert collapse_cjk_loop("图书馆几点开门？图书馆几点开门？\ufffd") == "图书馆几点开门？"
    # real speech that repeats a short word stays, and so does text without a loop
    assert collapse_cjk_loop("どうもどうも") == "どうもどうも"
    assert collapse_cjk_loop("谢谢谢谢") == "谢谢谢谢"
    assert collapse_cjk_loop("今日は良い天気ですね。") == "今日は良い天気ですね。"
    assert collapse_cjk_loop("Hello hello hello") == "Hello hello hello"


def test_english_only_keeps_the_english_model_and_never_loads_another() -> None:
    english = FakeWhisper(multilingual=False, text="What time is it?")
    loader = Loader(error="must not load")
    asr = LanguageAwareRecognizer(english, loader)
    assert asr.transcribe(SPEECH) == "What time is it?"  # before set_languages: as always
    asr.set_languages(["en-US"])
    assert asr.transcribe(SPEECH) == "What time is it?"
    assert loader.count == 0 and not asr.multilingual_loaded
    assert english.calls == [("en", None), ("en", None)]
    assert asr.last_language == "en"


def test_one_language_is_pinned_on_the_multilingual_model_loaded_when_set() -> None:
    english = FakeWhisper(multilingual=False)
    other = FakeWhisper(multilingual=True, text="こんにちは", heard="ko")
    loader = Loader(other)
    asr = LanguageAwareRecognizer(english, loader)
    asr.set_languages(["ja-JP"])
    assert loader.count == 1  # loaded between turns, before the user speaks
    assert asr.transcribe(SPEECH) == "こんにちは"
    assert other.calls == [("ja", None)] and english.calls == []
    assert asr.last_language == "ja"
    asr.set_languages(["ja", "zh", "en"])  # a tutor: detect among these three only
    asr.transcribe(SPEECH)
    assert other.calls[-1] == (None, ("ja", "zh", "en")) and loader.count == 1
    asr.set_languages(["en"])  # back to English: the English model again
    asr.transcribe(SPEECH)
    assert english.calls == [("en", None)]


def test_lazy_mode_loads_on_the_first_turn_that_needs_it() -> None:
    loader = Loader(FakeWhisper(multilingual=True, text="你好"))
    asr = LanguageAwareRecognizer(FakeWhisper(multilingual=False), loader, eager=False)
    asr.set_languages(["zh"])
    assert loader.count == 0
    asr.prepare()
    assert loader.count == 1
    assert asr.transcribe(SPEECH) == "你好" and asr.last_language == "zh"


def test_a_multilingual_production_model_serves_every_language_itself() -> None:
    production = FakeWhisper(multilingual=True, text="Hi")
    loader = Loader(error="must not load")
    asr = LanguageAwareRecognizer(production, loader)
    asr.set_languages(["en"])
    asr.transcribe(SPEECH)
    asr.set_languages(["zh", "en"])
    asr.transcribe(SPEECH)
    assert production.calls == [("en", None), (None, ("zh", "en"))]
    assert loader.count == 0


def test_a_model_that_cannot_load_says_so_once_per_try_and_is_not_retried() -> None:
    loader = Loader(error="the embedded multilingual Whisper model is not installed: pip x")
    asr = LanguageAwareRecognizer(FakeWhisper(multilingual=False), loader)
    with pytest.raises(EngineLoadError, match="pip x"):
        asr.set_languages(["ja"])
    with pytest.raises(EngineLoadError, match="pip x"):
        asr.transcribe(SPEECH)
    assert loader.count == 1
    asr.set_languages(["en"])  # English still works
    assert asr.transcribe(SPEECH) == "hello"


def test_chinese_comes_out_in_simplified_characters() -> None:
    traditional = FakeWhisper(multilingual=True, text="這本書非常有意思，我們明天見。", heard="zh")
    asr = LanguageAwareRecognizer(FakeWhisper(multilingual=False), Loader(traditional))
    asr.set_languages(["zh", "ja"])
    assert asr.transcribe(SPEECH) == "这本书非常有意思，我们明天见。"
    traditional.heard = "ja"  # Japanese kanji are never "simplified"
    traditional.text = "図書館で勉強しました。"
    assert asr.transcribe(SPEECH) == "図書館で勉強しました。" and asr.last_language == "ja"


def test_an_empty_transcript_has_no_language() -> None:
    asr = LanguageAwareRecognizer(FakeWhisper(multilingual=False, text=""), Loader())
    assert asr.transcribe(SPEECH) == ""
    assert asr.last_language is None


def test_the_30s_window_switch_reaches_every_model() -> None:
    english, other = FakeWhisper(multilingual=False), FakeWhisper(multilingual=True)
    asr = LanguageAwareRecognizer(english, Loader(other), eager=False)
    asr.short_window = False  # what `bench --asr-30s-window` does
    asr.set_languages(["ja"])
    asr.prepare()
    assert english.short_window is False and other.short_window is False
