"""The multilingual voice port: which voice speaks which chunk, at which rate, and what
happens when a language's voice cannot load (fast: stand-in voices, real eSpeak)."""

from __future__ import annotations

import numpy as np
import pytest

from app.adapters.espeak_tts import EspeakSynthesizer
from app.adapters.language_voices import KanaReadingVoice, LanguageVoices, voice_language
from app.core.events import FloatAudio


class Voice:
    """A voice that records what it was asked to say; one second of a tone per call."""

    def __init__(self, name: str, rate: int, voices: tuple[str, ...] = ()) -> None:
        self.name, self.sample_rate = name, rate
        self.voices = voices
        self.voice = voices[0] if voices else name
        self.speed = 1.0
        self.said: list[tuple[str, str, float]] = []

    def synthesize(self, text: str) -> FloatAudio:
        self.said.append((text, self.voice, self.speed))
        t = np.arange(self.sample_rate, dtype=np.float32) / self.sample_rate
        return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)

    def synthesize_as(self, text: str, voice: str, speed: float) -> FloatAudio:
        return self.synthesize(text)


def voices(
    english_rate: int = 22_050, fail: tuple[str, ...] = (), prepared: tuple[str, ...] = ("ja", "zh")
) -> tuple[LanguageVoices, Voice, dict[str, Voice], list[str]]:
    """Voices for a persona that speaks ``prepared`` (loaded ahead, as a persona switch does)."""
    english = Voice("en", english_rate, ("af_heart", "af_sky"))
    others = {
        "ja": Voice("ja", 24_000, ("jf_alpha", "jf_nezumi", "jm_kumo")),
        "zh": Voice("zh", 16_000, ("jf_alpha", "jf_nezumi", "jm_kumo")),
    }
    loads: list[str] = []

    def loader(code: str) -> object:
        def load() -> Voice:
            loads.append(code)
            if code in fail:
                raise RuntimeError(f"{code} model file is corrupt")
            return others[code]

        return load

    tts = LanguageVoices(english, {c: loader(c) for c in others})  # type: ignore[misc, dict-item]
    tts.prepare(prepared)
    return tts, english, others, loads


def spoken(voice: Voice) -> list[str]:
    """What a voice said, warm-up call left out."""
    return [text for text, _, _ in voice.said if text not in ("こんにちは。", "你好。")]


def test_each_chunk_is_spoken_by_its_languages_voice() -> None:
    tts, english, others, _ = voices()
    for language, chunk in [("en", "Sure."), ("ja", "東京は晴れです。"), ("zh", "北京很冷。"),
                            ("en", "See you.")]:
        tts.use_language(language)
        tts.synthesize(chunk)
    assert spoken(english) == ["Sure.", "See you."]
    assert spoken(others["ja"]) == ["東京は晴れです。"]
    assert spoken(others["zh"]) == ["北京很冷。"]


def test_a_language_switch_mid_reply_changes_the_voice_chunk_by_chunk() -> None:
    tts, english, others, _ = voices()
    tts.use_language("en-US")
    tts.synthesize("In Japanese you would say:")
    tts.use_language("ja-JP")
    tts.synthesize("お元気ですか？")
    tts.use_language("en")
    tts.synthesize("It means how are you.")
    assert spoken(english) == ["In Japanese you would say:", "It means how are you."]
    assert spoken(others["ja"]) == ["お元気ですか？"]


def test_cjk_text_never_reaches_the_english_voice_even_without_use_language() -> None:
    tts, english, others, _ = voices()
    tts.synthesize("こんにちは、元気？")
    tts.synthesize("你好吗？")
    assert spoken(english) == []
    assert spoken(others["ja"]) == ["こんにちは、元気？"]
    assert spoken(others["zh"]) == ["你好吗？"]


def test_every_language_comes_out_at_the_english_voices_rate() -> None:
    tts, *_ = voices(english_rate=22_050)
    assert tts.sample_rate == 22_050
    for language, text in [("en", "Hi."), ("ja", "はい。"), ("zh", "好。")]:
        tts.use_language(language)
        audio = tts.synthesize(text)
        assert tts.sample_rate == 22_050
        assert audio.dtype == np.float32
        assert abs(audio.size - 22_050) <= 50, (language, audio.size)  # one second each


def test_the_personas_languages_load_ahead_and_no_other_loads_mid_reply() -> None:
    """Loading Kokoro in the middle of an English persona's reply kept the user waiting
    6.6 s; a language the persona does not speak is read by eSpeak, which loads at once."""
    tts, _, others, loads = voices(prepared=())
    assert loads == []
    tts.prepare(["ja-JP", "en"])
    assert loads == ["ja"]
    # the eSpeak voice that reads Chinese words is ready too, before any reply needs it
    assert isinstance(tts._quick["zh"], EspeakSynthesizer)
    tts.use_language("ja")
    tts.synthesize("はい。")
    tts.use_language("zh")
    mandarin = tts.synthesize("你好，北京。")
    assert loads == ["ja"] and spoken(others["zh"]) == []
    assert isinstance(tts._quick["zh"], EspeakSynthesizer)
    assert float(np.max(np.abs(mandarin))) > 0.05  # said, by eSpeak cmn


def test_an_english_sentence_quoting_a_cjk_word_says_each_part_in_its_voice() -> None:
    tts, english, others, _ = voices()
    tts.use_language("en")
    audio = tts.synthesize('"Thank you" is ありがとう (arigatou) in Japanese.')
    assert spoken(english) == ['"Thank you" is', "(arigatou) in Japanese."]
    assert spoken(others["ja"]) == ["ありがとう"]
    assert abs(audio.size - 3 * 22_050) <= 100  # three runs, one rate
    tts.synthesize("In Mandarin it is 谢谢.")
    assert spoken(others["zh"]) == ["谢谢"]


def test_persona_voice_goes_to_its_language_and_speed_to_all() -> None:
    tts, english, others, _ = voices()
    tts.voice, tts.speed = "jf_nezumi", 1.2
    tts.use_language("ja")
    tts.synthesize("はい。")
    assert others["ja"].said[-1][1:] == ("jf_nezumi", 1.2)
    assert english.voice == "af_heart"  # an English persona's voice is not replaced
    tts.voice, tts.speed = "af_sky", 0.9
    assert english.voice == "af_sky" and english.speed == 0.9
    tts.synthesize("はい。")
    assert others["ja"].said[-1][1:] == ("jf_alpha", 0.9)  # back to the default voice
    tts.voice = "zf_xiaoxiao"  # not in this voices file: the same gender's best voice
    tts.use_language("zh")
    tts.synthesize("好。")
    assert others["zh"].said[-1][1] == "jf_nezumi"


@pytest.mark.parametrize(
    ("persona", "language", "expected"),
    [("zm_yunxi", "zh", "jm_kumo"), ("af_nicole", "zh", "jf_nezumi"),
     ("am_adam", "ja", "jm_kumo"), ("af_heart", "ja", "jf_alpha"), ("jm_kumo", "zh", "jm_kumo"),
     ("jf_nezumi", "ja", "jf_nezumi")],
)
def test_other_languages_speak_with_a_voice_of_the_personas_gender(
    persona: str, language: str, expected: str
) -> None:
    tts, _, others, _ = voices()
    tts.voice = persona
    tts.use_language(language)
    tts.synthesize("好。" if language == "zh" else "はい。")
    assert others[language].said[-1][1] == expected


def test_voice_language() -> None:
    assert voice_language("jm_kumo") == "ja" and voice_language("zm_yunxi") == "zh"
    assert voice_language("af_heart") == "en"


def test_a_voice_that_cannot_load_falls_back_to_espeak_once_with_one_notice() -> None:
    tts, english, _, loads = voices(fail=("ja",), prepared=("ja",))
    tts.use_language("ja")
    first = tts.synthesize("こんにちは、東京です。")
    second = tts.synthesize("ありがとう。")
    assert loads == ["ja"]  # tried once, not on every chunk
    [notice] = tts.take_notices()
    assert notice.startswith("Japanese voice could not load (ja model file is corrupt)")
    assert notice.endswith("speaking Japanese with eSpeak instead")
    assert "\n" not in notice
    assert tts.take_notices() == []
    assert spoken(english) == []  # never the English voice
    japanese = tts._engines["ja"]  # eSpeak, handed the kana reading
    assert isinstance(japanese, KanaReadingVoice) and isinstance(japanese.voice, EspeakSynthesizer)
    assert japanese.voice.voice == "ja"
    for audio in (first, second):
        assert float(np.max(np.abs(audio))) > 0.05


def test_mandarin_falls_back_to_espeak_cmn() -> None:
    tts, *_ = voices(fail=("zh",))
    tts.prepare(["zh"])
    [notice] = tts.take_notices()
    assert "Mandarin voice could not load" in notice
    assert isinstance(tts._engines["zh"], EspeakSynthesizer)
    assert tts._engines["zh"].voice == "cmn"
    tts.use_language("zh")
    assert float(np.max(np.abs(tts.synthesize("你好，北京。")))) > 0.05


def test_when_no_voice_can_speak_a_language_it_stays_silent_not_english() -> None:
    english = Voice("en", 22_050)

    def broken() -> Voice:
        raise RuntimeError("broken")

    tts = LanguageVoices(english, {"ja": broken, "zh": broken}, {"ja": broken, "zh": broken})
    tts.prepare(["ja"])
    tts.use_language("ja")
    assert tts.synthesize("はい。").size == 0
    assert spoken(english) == []
    [notice] = tts.take_notices()
    assert "stays silent" in notice


@pytest.mark.parametrize("language", ["es", "fr-FR", "", "en-GB"])
def test_other_languages_are_read_by_the_english_voice(language: str) -> None:
    tts, english, _, loads = voices(prepared=())
    tts.use_language(language)
    tts.synthesize("Hola.")
    assert spoken(english) == ["Hola."] and loads == []


def test_the_app_gets_the_language_voices_by_default(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.engines import EngineChoice, _voice

    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path))
    tts, notices = _voice(EngineChoice(tts_speed=1.25), None)
    assert notices == ()
    assert isinstance(tts, LanguageVoices)
    assert type(tts.english).__name__ == "PiperSynthesizer"  # English as before
    assert tts.sample_rate == tts.english.sample_rate == 22_050
    assert tts.speed == 1.25


def test_the_japanese_espeak_fallback_reads_kana_not_kanji() -> None:
    """eSpeak skips kanji; the fallback hands it Open JTalk's katakana reading."""
    from app.adapters.language_voices import espeak_fallbacks

    voice = espeak_fallbacks()["ja"]()
    assert isinstance(voice, KanaReadingVoice)
    assert voice.reading("今日は良い天気です。") == "キョーワヨイテンキデス。"
    heard: list[str] = []

    class Records:
        sample_rate = 22_050

        def synthesize(self, text: str) -> np.ndarray:
            heard.append(text)
            return np.zeros(10, np.float32)

    def broken(text: str) -> str:
        raise RuntimeError("no dictionary")

    KanaReadingVoice(Records(), voice.reading).synthesize("天気")
    KanaReadingVoice(Records(), broken).synthesize("天気")  # reads it as written, no crash
    assert heard == ["テンキ", "天気"]
    assert voice.synthesize("天気です。").size > 0  # real eSpeak speaks the reading


class PhonemizingVoice(Voice):
    def phonemes(self, text: str) -> str:
        return f"<{self.name}:{text}>"


def test_phonemes_come_from_the_voice_that_says_each_part_or_not_at_all() -> None:
    english = PhonemizingVoice("en", 22_050, ("af_heart",))
    japanese = PhonemizingVoice("ja", 24_000, ("jf_alpha",))
    tts = LanguageVoices(english, {"ja": lambda: japanese,  # type: ignore[dict-item]
                                   "zh": lambda: Voice("zh", 16_000, ("jm_kumo",))})
    tts.prepare(["ja", "zh"])
    assert tts.phonemes("Say ねこ please") == "<en:Say> <ja:ねこ> <en:please>"
    tts.use_language("ja")
    assert tts.phonemes("猫です") == "<ja:猫です>"
    tts.use_language("zh")  # this voice cannot tell: the mouth's shapes come from the audio
    assert tts.phonemes("你好") == ""
