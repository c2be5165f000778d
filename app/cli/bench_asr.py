"""``hanasu bench asr``: word error rate and time, short window vs the 30 s window.

Transcribes a labelled, many-voice, partly noisy set (``asr_speech``) with the Whisper
adapter both ways, so the speed-up and what it costs in accuracy are measured on the
same clips, on this machine. The load average is printed beside every figure because a
busy machine makes every time longer.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from pathlib import Path
from typing import Any

import platformdirs

from app.adapters.whisper_asr import DEFAULT_PAD_S
from app.cli.asr_speech import Utterance, load_or_build

SHORT_S = 5.0
"""Utterances shorter than this are the ones the ASR time target is about."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--asr", type=Path, help="faster-whisper model folder (default: embedded)")
    parser.add_argument(
        "--pads",
        default=str(DEFAULT_PAD_S),
        help="comma-separated padding (s) after the utterance to try in the short window "
        "(default: the app's; a sweep: 1.0,2.0,4.0)",
    )
    parser.add_argument(
        "--beams", default="5", help="comma-separated beam sizes, short window (the app's: 5)"
    )
    parser.add_argument(
        "--pad-kinds",
        default="silence",
        help="comma-separated: silence (silent audio) and/or zeros (zero mel frames)",
    )
    parser.add_argument(
        "--no-window30", action="store_true", help="skip the 30 s window (for padding sweeps)"
    )
    parser.add_argument(
        "--full-beam", type=int, default=5, help="beam size of the 30 s window (today's: 5)"
    )
    parser.add_argument("--ngrams", default="0", help="comma-separated no_repeat_ngram_size")
    parser.add_argument("--limit", type=int, default=0, help="use only the first N clips")
    parser.add_argument("--cache", type=Path, help="where the spoken set is kept")
    parser.add_argument("--json", type=Path, help="write the full report here")


def words(text: str) -> list[str]:
    """Lower-case words without punctuation: 'round-fark' -> ['round', 'fark']."""
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("-", " ")).split()


def edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    """Word-level Levenshtein distance (substitutions, insertions, deletions)."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        current = [i]
        for j, hyp in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp)))
        previous = current
    return previous[-1]


def wer(pairs: list[tuple[str, str]]) -> float:
    """Corpus word error rate over (reference, hypothesis) pairs."""
    errors = sum(edit_distance(words(r), words(h)) for r, h in pairs)
    total = sum(len(words(r)) for r, _ in pairs)
    return errors / total if total else 0.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(asr: Any, clips: list[tuple[Utterance, Any]]) -> dict[str, Any]:
    """Transcribe every clip once (after one warm-up) and summarise errors and times."""
    asr.transcribe(clips[0][1])
    rows = []
    loads = []
    for utterance, audio in clips:
        started = time.perf_counter()
        text = asr.transcribe(audio)
        elapsed = time.perf_counter() - started
        loads.append(os.getloadavg()[0])
        rows.append(
            {
                "name": utterance.name,
                "seconds": utterance.seconds,
                "noise": utterance.noise,
                "reference": utterance.text,
                "text": text,
                "time_s": elapsed,
                "path": getattr(asr, "last_path", ""),
            }
        )
    short = [r["time_s"] for r in rows if r["seconds"] < SHORT_S]
    every = [r["time_s"] for r in rows]
    return {
        "wer": wer([(r["reference"], r["text"]) for r in rows]),
        "wer_clean": wer([(r["reference"], r["text"]) for r in rows if r["noise"] == "none"]),
        "wer_noisy": wer([(r["reference"], r["text"]) for r in rows if r["noise"] != "none"]),
        "asr_under_5s_s": {
            "p50": statistics.median(short) if short else None,
            "p90": percentile(short, 0.9) if short else None,
            "n": len(short),
        },
        "asr_all_s": {"p50": statistics.median(every), "p90": percentile(every, 0.9)},
        "redone_full": sum(1 for r in rows if r["path"] == "full"),
        "load_avg_1m": {"min": min(loads), "max": max(loads)},
        "rows": rows,
    }


def main(args: argparse.Namespace) -> int:
    from app.adapters.whisper_asr import WhisperRecognizer

    cache = args.cache or platformdirs.user_cache_path("hanasu") / "bench"
    print(f"building/reading the spoken set in {cache} ...", flush=True)
    clips = load_or_build(cache)
    if args.limit:
        clips = clips[: args.limit]
    seconds = [u.seconds for u, _ in clips]
    print(
        f"{len(clips)} clips, {min(seconds):.1f}-{max(seconds):.1f} s, "
        f"{len({u.voice for u, _ in clips})} voices, "
        f"{sum(u.noise != 'none' for u, _ in clips)} noisy; load {os.getloadavg()}",
        flush=True,
    )
    asr = WhisperRecognizer(args.asr, full_beam_size=args.full_beam)
    modes: list[tuple[str, dict[str, Any]]] = []
    if not args.no_window30:
        modes.append(("window30", {"short_window": False}))
    for kind in args.pad_kinds.split(","):
        for beam in (int(b) for b in args.beams.split(",")):
            for pad in (float(p) for p in args.pads.split(",")):
                for ngram in (int(n) for n in args.ngrams.split(",")):
                    settings = {
                        "short_window": True,
                        "pad_s": pad,
                        "beam_size": beam,
                        "pad_kind": kind,
                        "no_repeat_ngram_size": ngram,
                    }
                    label = f"short_{kind}{pad:g}_beam{beam}" + (f"_ngram{ngram}" if ngram else "")
                    modes.append((label, settings))
    report: dict[str, Any] = {"clips": len(clips), "modes": {}}
    for name, settings in modes:
        for key, value in settings.items():
            setattr(asr, key, value)
        result = measure(asr, clips)
        report["modes"][name] = result
        under = result["asr_under_5s_s"]
        print(
            f"{name:24s} WER {result['wer']:.3f} (clean {result['wer_clean']:.3f}, "
            f"noisy {result['wer_noisy']:.3f})  ASR <5 s p50 {under['p50']:.3f} s "
            f"p90 {under['p90']:.3f} s (n={under['n']})  all p50 "
            f"{result['asr_all_s']['p50']:.3f} s  redone 30 s: {result['redone_full']}  "
            f"load {result['load_avg_1m']['min']:.2f}-{result['load_avg_1m']['max']:.2f}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0
