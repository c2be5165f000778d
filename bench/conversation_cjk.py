"""Japanese and Mandarin conversations for ``hanasu bench conversation --language ja|zh``.

The same shape as the English one (14 requests, every other one held out of tuning, three
said over the previous reply, levels varied), spoken by Kokoro-82M (``cjk_speech``): the
tuning half in one voice at its own pace, the held-out half in another voice (Japanese) or
slower and quieter (Mandarin: the package ships one voice that Whisper hears cleanly in
Mandarin). The persona is Yui or Ming, answering with the models a new user has here.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from app.core.events import FloatAudio
from bench.conversation import Request

JAPANESE = (
    "こんにちは、今日はどんな一日だった？",
    "明日の会議は午後3時からです。",
    "晩ごはんは何を作ったらいいかな？",
    "駅までどのくらいかかりますか？",
    "週末に友達と映画を見に行きました。",
    "東京タワーに行ったことがありますか？",
    "猫が窓の外を見ています。",
    "冷蔵庫に卵が2個残っています。何か作れる？",
    "来週の土曜日は雨が降るそうです。",
    "夏休みに北海道へ旅行します。何を持っていけばいい？",
    "この部屋は少し寒いですね。",
    "よく眠れる方法を教えてください。",
    "母は料理がとても上手です。",
    "おすすめの本はありますか？",
)
MANDARIN = (
    "你好，今天过得怎么样？",
    "我明天下午3点去北京。",
    "晚饭做什么好呢？",
    "请问火车站怎么走？",
    "周末我们一起去看电影吧。",
    "你喜欢吃什么菜？",
    "外面下雨了，记得带伞。",
    "我想学习做中国菜，从哪里开始？",
    "他在上海工作了五年。",
    "图书馆几点开门？",
    "这里的风景非常漂亮。",
    "怎样才能睡得更好？",
    "昨天晚上我睡得很早。",
    "你能推荐一本好书吗？",
)
VOICES = {"ja": (("jf_alpha", 1.0, 0.0), ("jf_nezumi", 1.0, -3.0)),
          "zh": (("jm_kumo", 1.0, 0.0), ("jm_kumo", 0.85, -4.0))}
"""(voice, speed, gain dB) for the tuning half and the held-out half."""
PERSONA = {"ja": "yui", "zh": "ming"}
OVER_REPLY = (3, 7, 11)
"""Which requests are said while the previous reply still plays (as in English)."""


def requests(language: str, count: int) -> list[Request]:
    texts = JAPANESE if language == "ja" else MANDARIN
    out = []
    for index in range(count):
        held = index % 2 == 1
        voice, speed, gain = VOICES[language][held]
        out.append(Request(texts[index % len(texts)], f"kokoro:{language}:{voice}:{speed}",
                           held, gain, over_reply=index in OVER_REPLY))
    return out


def speak_kokoro(spec: str, text: str) -> FloatAudio:
    """``spec`` is "<language>:<voice>:<speed>"."""
    language, voice, speed = spec.split(":")
    audio: FloatAudio = _speaker().speak(text, language, voice=voice, speed=float(speed))
    return audio


@functools.cache
def _speaker() -> Any:
    from bench.cjk_speech import CjkSpeaker, kokoro_files

    return CjkSpeaker(*kokoro_files(Path(tempfile.mkdtemp(prefix="hanasu-kokoro-"))))
