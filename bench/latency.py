"""``hanasu bench``: voice-to-voice latency over many spoken questions, measured from audio.

End of speech comes from the input file itself (its last loud sample), first audio from
the output track (its first loud sample after that), on one clock, the way independent
benchmarks measure; the per-stage breakdown comes from the timeline. The same run also
times a naive serial baseline (ASR after the end of turn, the whole answer, then the
whole answer's TTS) on the same engines, so the ratio means something on any machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from app.adapters.file_audio import read_audio, write_audio
from app.cli.file_session import run_file
from app.cli.run import add_engine_arguments, load_persona_and_engines
from app.core.events import FloatAudio
from app.core.metrics import TurnTimeline
from app.core.pipeline import Engines, PipelineConfig
from app.core.ports import PIPELINE_SAMPLE_RATE, ChatMessage, LanguageModel, PromptStats
from app.core.sentences import speakable_text
from app.engines import build_turn_detector
from app.gpu import nvidia_gpus
from app.personas import Persona

QUESTIONS = [
    "What is your name?",
    "How are you today?",
    "Can you tell me a joke?",
    "What should I cook for dinner tonight?",
    "What is the capital of France?",
    "Do you like music?",
    "What is a good book to read?",
    "How do I stay focused at work?",
    "What is your favourite colour?",
    "Tell me something interesting about the ocean.",
    "Where would you like to travel?",
    "What makes a good friend?",
    "Why is the sky blue?",
    "What is the capital of Australia?",
    "What's a good name for a grey kitten?",
    "Summarize the plot of Romeo and Juliet in one sentence.",
    "How far away is the moon?",
    "Can you help me plan my weekend?",
    "What is the best way to learn a new language?",
    "Do you think it will rain tomorrow?",
    "How do bees make honey?",
    "What should I name my new plant?",
    "Tell me a fun fact about space.",
    "How can I sleep better at night?",
    "What is your favourite season and why?",
    "Could you recommend a good movie for tonight?",
    "How do I make a cup of tea?",
    "What do you like to do for fun?",
    "Why do cats purr?",
    "What is the tallest mountain in the world?",
    "How many days are there in a leap year?",
    "Can you give me a word that rhymes with orange?",
    "What should I write in a birthday card for my mum?",
    "How do I say thank you in Japanese?",
    "What is the difference between weather and climate?",
    "Tell me a short story about a dragon.",
    "What is a healthy breakfast?",
    "How do airplanes stay in the air?",
    "What is the nicest thing someone ever said to you?",
    "Give me one tip to be more productive.",
    "Which is bigger, a whale or an elephant?",
    "What would you do on a rainy afternoon?",
]
VOICES = {
    "piper": [("piper", "", 0)],
    "espeak": [("espeak", "en-us", 140)],
    "mixed": [
        ("piper", "", 0),
        ("espeak", "en-us", 150),
        ("espeak", "en-gb", 170),
        ("espeak", "en-gb-scotland", 140),
    ],
}
"""Who speaks the generated questions, cycled: (engine, espeak voice, words per minute)."""
LOUD = 0.01
"""Amplitude that counts as audible when finding speech edges in the files."""
GAP_S = 0.150
"""A wait between two chunks of one reply longer than this is heard as a gap."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wavs", type=Path, help="folder of question WAVs (default: generate)")
    parser.add_argument(
        "--count", type=int, default=40, help=f"questions to generate (max {len(QUESTIONS)})"
    )
    parser.add_argument(
        "--voice",
        choices=sorted(VOICES),
        default="mixed",
        help="voices that speak the generated questions (piper has natural prosody; "
        "mixed adds espeak-ng accents)",
    )
    parser.add_argument(
        "--smart-turn",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="end turns early with the Smart Turn model",
    )
    parser.add_argument(
        "--speculative",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="start ASR/LLM/TTS at the first pause, holding the audio",
    )
    parser.add_argument(
        "--first-audio-priority",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the LLM pauses while the first chunk is synthesized (before/after comparison)",
    )
    parser.add_argument(
        "--acknowledgement",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="say the persona's short acknowledgement when the answer is late",
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip the naive serial baseline")
    parser.add_argument(
        "--asr-30s-window",
        action="store_true",
        help="transcribe the old way (each turn padded to a 30 s window), for before/after",
    )
    parser.add_argument("--json", type=Path, help="write the full report here")
    add_engine_arguments(parser)
    parser.add_argument(
        "--compare-local",
        action="store_true",
        help="with --llm-url: also run every question with the in-process model, side by side",
    )


def speak_questions(folder: Path, count: int, voice: str = "mixed") -> list[Path]:
    """Spoken test questions, in turn by each of ``VOICES[voice]``: the embedded Piper
    voice (natural prosody, which the end-of-turn model listens to) and espeak-ng
    accents at several speeds (robotic but independent of our TTS)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    piper = None
    espeak = shutil.which("espeak-ng")
    speakers = VOICES[voice]
    for index, text in enumerate(QUESTIONS[:count]):
        path = folder / f"q{index:02d}.wav"
        engine, accent, wpm = speakers[index % len(speakers)]
        if engine == "piper":
            if piper is None:
                from app.adapters.piper_tts import PiperSynthesizer

                piper = PiperSynthesizer()
            write_audio(path, piper.synthesize(text), piper.sample_rate)
        elif espeak is not None:
            command = [espeak, "-v", accent, "-s", str(wpm), "-w", str(path), text]
            subprocess.run(command, check=True)
        else:
            raise RuntimeError("espeak-ng is needed to generate questions (or pass --wavs)")
        paths.append(path)
    return paths


def with_silence(audio: FloatAudio, before_s: float = 0.6, after_s: float = 1.0) -> FloatAudio:
    rate = PIPELINE_SAMPLE_RATE
    return np.concatenate(
        [
            np.zeros(int(before_s * rate), np.float32),
            audio,
            np.zeros(int(after_s * rate), np.float32),
        ]
    )


def speech_end_s(audio: FloatAudio, rate: int) -> float:
    loud = np.flatnonzero(np.abs(audio) > LOUD)
    return float(loud[-1] + 1) / rate if loud.size else 0.0


def first_audio_after_s(track: FloatAudio, rate: int, after_s: float) -> float | None:
    start = int(after_s * rate)
    loud = np.flatnonzero(np.abs(track[start:]) > LOUD)
    return (start + float(loud[0])) / rate if loud.size else None


def stage_costs(turn: TurnTimeline) -> dict[str, float | None]:
    def gap(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else b - a

    return {
        "end_of_turn_wait": gap(turn.speech_end, turn.end_of_turn),
        "asr": gap(turn.turn_started, turn.asr_final),
        "llm_first_token": gap(turn.asr_final, turn.llm_first_token),
        "first_chunk": gap(turn.llm_first_token, turn.first_chunk_to_tts),
        "tts_first_audio": gap(turn.first_chunk_to_tts, turn.tts_first_audio),
        "to_first_sample": gap(turn.tts_first_audio, turn.first_sample_played),
    }


def answer_delay_s(turn: TurnTimeline | None) -> float:
    """How much later than the first sound the answer itself began: 0 without an
    acknowledgement, else the acknowledgement's lead on the timeline (the speaker track
    cannot tell "Hmm," from the answer, the timeline can)."""
    if turn is None or not turn.acknowledgement:
        return 0.0
    if turn.answer_played is None or turn.first_sample_played is None:
        return 0.0
    return max(0.0, turn.answer_played - turn.first_sample_played)


def naive_turn_s(engines: Engines, persona: Persona, audio: FloatAudio, hangover_s: float) -> float:
    """The serial baseline: wait the hangover, ASR, the whole answer, TTS of all of it."""
    from app.core.ports import ChatMessage

    started = time.perf_counter()
    text = engines.asr.transcribe(audio)
    messages = [ChatMessage("system", persona.full_system_prompt()), ChatMessage("user", text)]
    reply = "".join(engines.llm.stream(messages, lambda: False))
    engines.tts.synthesize(speakable_text(reply) or "Okay.")
    return hangover_s + time.perf_counter() - started


def percentile(ordered: list[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": statistics.median(ordered),
        "p90": percentile(ordered, 0.9),
        "p99": percentile(ordered, 0.99),
        "n": float(len(ordered)),
    }


def machine_name() -> str:
    gpu = ", ".join(g.name for g in nvidia_gpus()) or "no GPU"
    return f"{platform.machine()} {os.cpu_count()} CPUs, {gpu}, Python {platform.python_version()}"


class CountingModel:
    """Passes a language model through, counting the pieces (streamed chunks) of each
    reply, so the bench can report tokens per chunk for any engine."""

    def __init__(self, inner: LanguageModel) -> None:
        self.inner = inner
        self.pieces: list[str] = []

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        return self.inner.warm(messages)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        self.pieces = []
        inner = self.inner.stream(messages, cancelled, on_prompt)
        try:
            for piece in inner:
                self.pieces.append(piece)
                yield piece
        finally:
            close = getattr(inner, "close", None)
            if close is not None:
                close()

    def set_temperature(self, temperature: float | None) -> None:
        inner = getattr(self.inner, "set_temperature", None)
        if callable(inner):
            inner(temperature)

    def tokens_per_chunk(self) -> float | None:
        """Generated tokens per streamed piece of the last reply: the server's own count
        where it reports one, else the reply re-tokenized by the model's tokenizer."""
        if not self.pieces:
            return None
        last = getattr(self.inner, "last_stream", None)
        if last is not None and last.tokens_per_chunk is not None:
            return float(last.tokens_per_chunk)
        text = "".join(self.pieces)
        count: int | None = None
        if hasattr(self.inner, "count_tokens"):
            count = self.inner.count_tokens(text)
        elif hasattr(self.inner, "tokenize"):
            count = len(self.inner.tokenize(text))
        return None if count is None else count / len(self.pieces)


def _local_llm(args: argparse.Namespace, persona: Persona) -> LanguageModel:
    """The in-process model, for ``--compare-local`` next to a server."""
    from app.adapters.llama_llm import LlamaLanguageModel
    from app.models.resolve import resolve

    llm = LlamaLanguageModel(resolve("llm").path, n_gpu_layers=args.n_gpu_layers)
    llm.warm([ChatMessage("system", persona.full_system_prompt())])
    return llm


def main(args: argparse.Namespace) -> int:
    persona, engines = load_persona_and_engines(args)
    if not args.acknowledgement:
        persona = persona.model_copy(update={
            "acknowledgement": persona.acknowledgement.model_copy(update={"phrases": ()})})
    if args.asr_30s_window and hasattr(engines.asr, "short_window"):
        engines.asr.short_window = False
    with tempfile.TemporaryDirectory() as tmp:
        paths = (
            sorted(args.wavs.glob("*.wav"))
            if args.wavs
            else speak_questions(Path(tmp), args.count, args.voice)
        )
        inputs = [with_silence(read_audio(p)) for p in paths]
    config = PipelineConfig(
        speculative=args.speculative, first_audio_priority=args.first_audio_priority)
    detector = build_turn_detector() if args.smart_turn and not args.fake_engines else None
    variants = [("server" if args.llm_url else "in_process", engines)]
    if args.llm_url and args.compare_local:
        variants.insert(0, ("in_process", replace(engines, llm=_local_llm(args, persona))))
    # Question by question, each engine in turn: load on a shared machine drifts, and
    # interleaving spreads it evenly over the engines compared.
    counted = [(name, CountingModel(chosen.llm), chosen) for name, chosen in variants]
    rows: dict[str, list[dict[str, object]]] = {name: [] for name, _ in variants}
    for path, audio in zip(paths, inputs, strict=True):
        for name, counting, chosen in counted:
            measured = replace(chosen, llm=counting)
            result = run_file(measured, persona, audio, config, turn_detector=detector)
            end = speech_end_s(audio, PIPELINE_SAMPLE_RATE)
            first = first_audio_after_s(result.output, result.sample_rate, end)
            turn = result.turns[0] if result.turns else None
            row: dict[str, object] = {
                "input": path.name,
                "voice_to_voice": None if first is None else first - end + answer_delay_s(turn),
                "first_sound": None if first is None else first - end,
                "acknowledgement": turn.acknowledgement if turn else "",
                "transcript": turn.transcript if turn else "",
                "reply": turn.heard_text if turn else "",
                "prefix_reused": turn.prefix_reused if turn else None,
                "tokens_per_chunk": counting.tokens_per_chunk(),
                "stages": stage_costs(turn) if turn else {},
                "playback_gaps": turn.playback_gaps() if turn else [],
            }
            if not args.no_baseline:
                hangover = config.endpoint.end_of_turn_ms / 1000
                row["naive_serial"] = naive_turn_s(chosen, persona, audio, hangover)
            rows[name].append(row)
            v2v = row["voice_to_voice"]
            label = f"{name} {path.name}" if len(variants) > 1 else path.name
            said = f" (first sound {row['first_sound']:.3f} s: {turn.acknowledgement!r})" if (
                turn and turn.acknowledgement and isinstance(row["first_sound"], float)) else ""
            print(
                f"{label}: v2v {v2v:.3f} s{said}" if isinstance(v2v, float)
                else f"{label}: no reply",
                flush=True,
            )
    reports = {name: _report(found) for name, found in rows.items()}
    if len(reports) == 1:
        report = next(iter(reports.values()))
        print(json.dumps(report["summary"], indent=2))
    else:  # side by side, same questions, same ASR and voice
        report = {name: r["summary"] for name, r in reports.items()}
        print(json.dumps(report, indent=2))
        report = {"summary": report, "runs": reports}
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def _report(rows: list[dict[str, object]]) -> dict[str, object]:
    v2v = [r["voice_to_voice"] for r in rows if isinstance(r["voice_to_voice"], float)]
    stats: dict[str, object] = {
        "machine": machine_name(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "turns": len(rows),
        "replied": len(v2v),
    }
    gaps = [
        float(g) for r in rows if isinstance(found := r.get("playback_gaps"), list) for g in found
    ]
    stats["chunk_gaps"] = {  # silences the speaker waited between chunks of one reply
        "over_150ms": sum(1 for g in gaps if g > GAP_S),
        "longest_s": max(gaps, default=0.0),
        "between_chunks": len(gaps),
    }
    if v2v:
        stats["voice_to_voice_s"] = summary(v2v)  # to the first answer word
    first_sound = [r["first_sound"] for r in rows if isinstance(r.get("first_sound"), float)]
    if first_sound:  # the acknowledgement's, where one played
        stats["first_sound_s"] = summary(first_sound)  # type: ignore[arg-type]
    stats["acknowledged_turns"] = sum(1 for r in rows if r.get("acknowledgement"))
    naive = [r["naive_serial"] for r in rows if isinstance(r.get("naive_serial"), float)]
    if naive:
        stats["naive_serial_s"] = summary(naive)  # type: ignore[arg-type]
    stage_names = [
        "end_of_turn_wait",
        "asr",
        "llm_first_token",
        "first_chunk",
        "tts_first_audio",
        "to_first_sample",
    ]
    stages: dict[str, dict[str, float]] = {}
    for name in stage_names:
        values = [
            s[name]
            for r in rows
            if isinstance(s := r["stages"], dict) and isinstance(s.get(name), float)
        ]
        if values:
            stages[name] = summary(values)
    stats["stages_s"] = stages
    per_chunk = [
        r["tokens_per_chunk"] for r in rows if isinstance(r.get("tokens_per_chunk"), float)
    ]
    if per_chunk:
        stats["tokens_per_chunk"] = summary(per_chunk)  # type: ignore[arg-type]
    return {"summary": stats, "turns": rows}
