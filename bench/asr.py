"""``hanasu bench asr``: word error rate and time, short window vs the 30 s window.

Transcribes a labelled, many-voice, partly noisy set (``asr_speech``) with the Whisper
adapter both ways, so the speed-up and what it costs in accuracy are measured on the
same clips, on this machine. ``--language ja|zh`` measures the app's language-aware
recognizer instead on 22 Japanese or Mandarin sentences spoken by Kokoro (app/cli/
cjk_speech.py): character error rate and time, the language pinned, or detected among
en/ja/zh with ``--detect``. The load average is printed beside every figure because a
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
from bench.asr_speech import Utterance, load_or_build
from bench.error_rate import edit_distance

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
    parser.add_argument(
        "--threads",
        default="",
        help="comma-separated CPU thread counts to compare (default: the app's choice; "
        "with --language ja/zh only the first is used)",
    )
    parser.add_argument("--ngrams", default="0", help="comma-separated no_repeat_ngram_size")
    parser.add_argument(
        "--redo",
        default="short",
        help="comma-separated ways to redo a doubtful short-window result: short (once "
        "more with another padding, the app's) and/or full (the 30 s way, the old one)",
    )
    parser.add_argument("--limit", type=int, default=0, help="use only the first N clips")
    parser.add_argument("--cache", type=Path, help="where the spoken set is kept")
    parser.add_argument("--json", type=Path, help="write the full report here")
    parser.add_argument(
        "--language",
        choices=("en", "ja", "zh"),
        default="en",
        help="en: the labelled English set (default); ja/zh: Kokoro-spoken sentences, "
        "character error rate, through the language-aware recognizer",
    )
    parser.add_argument(
        "--detect",
        action="store_true",
        help="with --language ja/zh: detect among en, ja and zh instead of pinning",
    )


def words(text: str) -> list[str]:
    """Lower-case words without punctuation: 'round-fark' -> ['round', 'fark']."""
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("-", " ")).split()


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
            "p99": percentile(short, 0.99) if short else None,
            "max": max(short) if short else None,
            "n": len(short),
        },
        "asr_all_s": {"p50": statistics.median(every), "p90": percentile(every, 0.9)},
        "redone_full": sum(1 for r in rows if r["path"] == "full"),
        "redone_short": sum(1 for r in rows if r["path"] == "short-redo"),
        "load_avg_1m": {"min": min(loads), "max": max(loads)},
        "rows": rows,
    }


def main(args: argparse.Namespace) -> int:
    from app.adapters.whisper_asr import WhisperRecognizer

    cache = args.cache or platformdirs.user_cache_path("hanasu") / "bench"
    if args.language != "en":
        return main_cjk(args, cache)
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
    report: dict[str, Any] = {"clips": len(clips), "modes": {}}
    for threads in _thread_counts(args):
        asr = WhisperRecognizer(args.asr, full_beam_size=args.full_beam, cpu_threads=threads)
        suffix = f"_threads{threads}" if threads is not None else ""
        for name, settings in _modes(args):
            for key, value in settings.items():
                setattr(asr, key, value)
            result = measure(asr, clips)
            report["modes"][name + suffix] = result
            _print_mode(name + suffix, result)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def _thread_counts(args: argparse.Namespace) -> list[int | None]:
    """``--threads`` as numbers; [None] (the app's choice) when not given."""
    return [int(t) for t in args.threads.split(",") if t] or [None]


def _modes(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """The decoding settings to compare, each with its label."""
    modes: list[tuple[str, dict[str, Any]]] = []
    if not args.no_window30:
        modes.append(("window30", {"short_window": False}))
    for kind in args.pad_kinds.split(","):
        for beam in (int(b) for b in args.beams.split(",")):
            for pad in (float(p) for p in args.pads.split(",")):
                for ngram in (int(n) for n in args.ngrams.split(",")):
                    for redo in args.redo.split(","):
                        settings = {
                            "short_window": True,
                            "pad_s": pad,
                            "beam_size": beam,
                            "pad_kind": kind,
                            "no_repeat_ngram_size": ngram,
                            "doubtful_redo": redo,
                        }
                        label = (f"short_{kind}{pad:g}_beam{beam}"
                                 + (f"_ngram{ngram}" if ngram else "") + f"_redo-{redo}")
                        modes.append((label, settings))
    return modes


def _print_mode(name: str, result: dict[str, Any]) -> None:
    under = result["asr_under_5s_s"]
    print(
        f"{name:24s} WER {result['wer']:.3f} (clean {result['wer_clean']:.3f}, "
        f"noisy {result['wer_noisy']:.3f})  ASR <5 s p50 {under['p50']:.3f} s "
        f"p90 {under['p90']:.3f} s p99 {under['p99']:.3f} s max {under['max']:.3f} s "
        f"(n={under['n']})  all p50 {result['asr_all_s']['p50']:.3f} s  redone: "
        f"30 s {result['redone_full']}, short {result['redone_short']}  "
        f"load {result['load_avg_1m']['min']:.2f}-{result['load_avg_1m']['max']:.2f}",
        flush=True,
    )


def main_cjk(args: argparse.Namespace, cache: Path) -> int:
    """Japanese or Mandarin: the app's recognizer (multilingual model, short window) on
    Kokoro speech; the 30 s window beside it unless ``--no-window30``."""
    from app.adapters.multilingual_asr import LanguageAwareRecognizer, load_multilingual_whisper
    from app.adapters.whisper_asr import WhisperRecognizer
    from bench.cjk_speech import JAPANESE, MANDARIN, CjkSpeaker, cer, kokoro_files

    language = str(args.language)
    try:
        speaker = CjkSpeaker(*kokoro_files(cache / "kokoro"))
    except RuntimeError as exc:
        print(exc)
        return 1
    sentences: tuple[str, ...] = JAPANESE if language == "ja" else MANDARIN
    if args.limit:
        sentences = sentences[: args.limit]
    clips = []
    for index, text in enumerate(sentences):
        audio = speaker.speak(text, language)
        utterance = Utterance(
            f"{language}{index:02d}", text, "kokoro", "none", 0.0, audio.size / 16e3
        )
        clips.append((utterance, audio))
    allowed = ["en", "ja", "zh"] if args.detect else [language]
    threads = _thread_counts(args)[0]
    asr = LanguageAwareRecognizer(
        WhisperRecognizer(args.asr, full_beam_size=args.full_beam, cpu_threads=threads),
        lambda: load_multilingual_whisper(cpu_threads=threads),
    )
    asr.set_languages(allowed)
    print(
        f"{len(clips)} {language} clips, {min(u.seconds for u, _ in clips):.1f}-"
        f"{max(u.seconds for u, _ in clips):.1f} s; languages {allowed}; load {os.getloadavg()}",
        flush=True,
    )
    report: dict[str, Any] = {"clips": len(clips), "language": language, "modes": {}}
    modes = [] if args.no_window30 else [("window30", False)]
    modes.append(("short_app", True))
    for name, short in modes:
        asr.short_window = short
        recorder = _Transcriber(asr)
        result = measure(recorder, clips)
        result["cer"] = cer([(r["reference"], r["text"]) for r in result["rows"]])
        result["language_right"] = sum(h == language for h in recorder.heard[1:])  # no warm-up
        report["modes"][name] = result
        print(
            f"{name:10s} CER {result['cer']:.3f}  ASR p50 {result['asr_all_s']['p50']:.3f} s "
            f"p90 {result['asr_all_s']['p90']:.3f} s  language right "
            f"{result['language_right']}/{len(clips)}  redone 30 s: {result['redone_full']}  "
            f"load {result['load_avg_1m']['min']:.2f}-{result['load_avg_1m']['max']:.2f}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


class _Transcriber:
    """``measure``'s view of the recognizer: the transcript, the path the active model
    took (short, or redone on the 30 s window), and each turn's language."""

    def __init__(self, asr: Any) -> None:
        self._asr = asr
        self.heard: list[str | None] = []

    def transcribe(self, audio: Any) -> str:
        text = str(self._asr.transcribe(audio))
        self.heard.append(self._asr.last_language)
        return text

    @property
    def last_path(self) -> str:
        return str(getattr(self._asr.active, "last_path", ""))
