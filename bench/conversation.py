"""``hanasu bench conversation``: one long spoken conversation, measured from the audio.

What a user meets is not one question in a warm process: it is a dozen requests in one
session, the history growing, replies running long, some requests made while the previous
reply still plays. This bench builds such a session as one microphone track (generated
voices at several rates, levels and noise, and recordings of people), plays it in real
time through ``run_file`` (the app's own microphone ring, output ring and feeder), and
scores every turn from the speaker track: the end of the request's speech in the input,
the first loud sample after it in the output. The timeline adds only the stage breakdown
and, where the persona said "Hmm," first, how much later the answer itself began.

Half of the requests are held out: their voices, recordings and questions are never used
when tuning (the other benchmarks speak ``latency.QUESTIONS`` in ``latency.VOICES``), and
they are reported on their own.
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.adapters.file_audio import read_audio, write_audio
from app.cli.file_session import RunResult, run_file
from app.cli.run import add_engine_arguments, load_persona_and_engines
from app.core.endpointing import EndpointConfig
from app.core.events import FloatAudio
from app.core.gate_config import GateConfig
from app.core.metrics import TurnTimeline
from app.core.pipeline import PipelineConfig
from app.core.ports import PIPELINE_SAMPLE_RATE
from app.engines import build_turn_detector
from bench.latency import GAP_S, LOUD, answer_delay_s, machine_name, stage_costs, summary

RATE = PIPELINE_SAMPLE_RATE
RECORDINGS = Path(__file__).with_name("recordings")
TARGET_RMS_DB = -24.0
"""Every request is brought to this level before its own gain (so gains mean something)."""


@dataclass(frozen=True)
class Request:
    """One thing the user says: who says it, how loud, over what, and when."""

    text: str
    voice: str
    """"piper", "espeak:<voice>:<wpm>" or "recording:<file>[:<start>-<end> s]"."""
    held_out: bool
    gain_db: float = 0.0
    noisy: bool = False
    """A fan or a street under this request (noise about 15 dB under the voice)."""
    over_reply: bool = False
    """Said two seconds after the previous request: the previous reply still plays."""


CONVERSATION = [
    Request("How are you today?", "piper", False),
    Request("And you always want to see it in the superlative degree.",
            "recording:arctic_a0007.wav", True, -3.0),
    Request("What should I cook for dinner tonight?", "espeak:en-us:150", False, -6.0),
    Request("I'm going on a long train ride tomorrow, what should I bring?",
            "espeak:en-us+f3:165", True, 0.0, over_reply=True),
    Request("Tell me something interesting about the ocean.", "espeak:en-gb:170", False, 0.0,
            noisy=True),
    Request("And I'm Sheila in Texas, originally from Chicago.",
            "recording:pyannote_sample.wav:14.40-17.80", True, 0.0),
    Request("How do bees make honey?", "piper", False, -9.0),
    Request("How long should I boil an egg?", "espeak:en-gb-x-rp+m3:125", True, -3.0,
            over_reply=True),
    Request("Can you help me plan my weekend?", "espeak:en-gb-scotland:140", False, 0.0),
    Request("Ever tried. Ever failed. No matter. Try again. Fail again. Fail better.",
            "recording:beckett.wav", True, -6.0, noisy=True),
    Request("Why do cats purr?", "piper", False, 0.0),
    Request("My friend's birthday is next week, any gift ideas?", "espeak:en-us+m7:185", True,
            0.0, over_reply=True),
    Request("How can I sleep better at night?", "espeak:en-us:150", False, -3.0),
    Request("Oh, I'm originally from Chicago also.",
            "recording:pyannote_sample.wav:17.75-20.15", True, 0.0),
]
"""Fourteen requests, alternating the tuning set and the held-out set."""
EXTRA_TUNING = ["What is a good book to read?", "How far away is the moon?",
                "What is the capital of Australia?", "How do I make a cup of tea?"]
EXTRA_HELD_OUT = ["What's a polite way to say no to an invitation?",
                  "How many cups of water should I drink a day?",
                  "Can you recommend a board game for four people?",
                  "What's the best way to remember names?"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--requests", type=int, default=len(CONVERSATION),
                        help=f"requests in the conversation (at least 12; {len(CONVERSATION)} "
                        "are scripted, more cycle extra questions)")
    parser.add_argument("--gap-s", type=float, default=11.0,
                        help="silence after a request before the next (replies may run long)")
    parser.add_argument("--noise-db", type=float, default=-60.0,
                        help="the room's noise floor under the whole track, dBFS")
    parser.add_argument("--smart-turn", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--first-chunk-words", type=int,
                        default=GateConfig().first_chunk_break_words,
                        help="words before the first chunk may be cut ahead of an opener "
                        "(0: only at a comma or the sentence's end, as before)")
    parser.add_argument("--pause-ms", type=int, default=EndpointConfig().pause_ms,
                        help="silence after speech that starts the speculative turn")
    parser.add_argument("--transcribe-ahead", action=argparse.BooleanOptionalAction,
                        default=True, help="transcribe and score the utterance at its first quiet "
                        "frame, before the pause (off: at the pause, as before)")
    parser.add_argument("--warm-history", action=argparse.BooleanOptionalAction, default=True,
                        help="evaluate each exchange into the model's cache before the next "
                        "turn (off: the next turn evaluates it, as before)")
    parser.add_argument("--language", choices=["en", "ja", "zh"], default="en",
                        help="the conversation's language (ja: Yui, zh: Ming, unless "
                        "--persona; spoken by Kokoro)")
    parser.add_argument("--save", type=Path, help="keep the input and output tracks here")
    parser.add_argument("--json", type=Path, help="write the full report here")
    add_engine_arguments(parser)


def conversation(count: int) -> list[Request]:
    """The scripted requests, then extra ones alternating the two sets."""
    requests = list(CONVERSATION[:count])
    extra = 0
    while len(requests) < count:
        held = extra % 2 == 1
        pool = EXTRA_HELD_OUT if held else EXTRA_TUNING
        voice = "espeak:en-us+f2:160" if held else "espeak:en-us:150"
        requests.append(Request(pool[(extra // 2) % len(pool)], voice, held,
                                over_reply=extra % 4 == 3))
        extra += 1
    return requests


def speak(request: Request, folder: Path) -> FloatAudio:
    """The request as 16 kHz mono, brought to ``TARGET_RMS_DB`` + its gain."""
    kind, _, spec = request.voice.partition(":")
    if kind == "piper":
        piper = _piper()
        path = folder / "piper.wav"
        write_audio(path, piper.synthesize(request.text), piper.sample_rate)
        audio = read_audio(path)
    elif kind == "espeak":
        exe = shutil.which("espeak-ng")
        if exe is None:
            raise RuntimeError("espeak-ng is needed to speak the requests "
                               "(apt-get install espeak-ng)")
        voice, _, wpm = spec.partition(":")
        path = folder / "espeak.wav"
        subprocess.run([exe, "-v", voice, "-s", wpm or "150", "-w", str(path), request.text],
                       check=True)
        audio = read_audio(path)
    elif kind == "kokoro":
        from bench.conversation_cjk import speak_kokoro

        audio = speak_kokoro(spec, request.text)
    elif kind == "recording":
        name, _, span = spec.partition(":")
        audio = read_audio(RECORDINGS / name)
        if span:
            start_s, _, end_s = span.partition("-")
            audio = audio[int(float(start_s) * RATE):int(float(end_s) * RATE)]
    else:
        raise ValueError(f"unknown voice {request.voice!r}")
    audio = audio[_first_loud(audio):_last_loud(audio)]
    rms = float(np.sqrt(np.mean(np.square(audio)))) or 1.0
    level = 10 ** ((TARGET_RMS_DB + request.gain_db) / 20)
    return (audio * (level / rms)).astype(np.float32)


@functools.cache
def _piper() -> Any:
    from app.adapters.piper_tts import PiperSynthesizer

    return PiperSynthesizer()


def _first_loud(audio: FloatAudio) -> int:
    loud = np.flatnonzero(np.abs(audio) > LOUD)
    return int(loud[0]) if loud.size else 0


def _last_loud(audio: FloatAudio) -> int:
    loud = np.flatnonzero(np.abs(audio) > LOUD)
    return int(loud[-1]) + 1 if loud.size else audio.size


@dataclass(frozen=True)
class Placed:
    request: Request
    start_s: float
    end_s: float
    """The request's first and last loud sample on the track (= the run's clock)."""


def build_track(requests: list[Request], gap_s: float, noise_db: float,
                seed: int = 7) -> tuple[FloatAudio, list[Placed]]:
    """One microphone track: each request after the previous one's end plus ``gap_s``
    (two seconds for one said over the reply), noise where asked, a noise floor."""
    rng = np.random.default_rng(seed)
    placed: list[Placed] = []
    clips: list[tuple[int, FloatAudio, bool]] = []
    at = 1.0
    with tempfile.TemporaryDirectory() as tmp:
        for request in requests:
            if placed:
                at = placed[-1].end_s + (2.0 if request.over_reply else gap_s)
            audio = speak(request, Path(tmp))
            placed.append(Placed(request, at, at + audio.size / RATE))
            clips.append((int(at * RATE), audio, request.noisy))
    total = int((placed[-1].end_s + gap_s + 2.0) * RATE)
    track = _noise(rng, total, noise_db)
    for start, audio, noisy in clips:
        track[start:start + audio.size] += audio
        if noisy:  # from a little before to a little after the request
            lo, hi = max(0, start - RATE // 2), min(total, start + audio.size + RATE // 2)
            track[lo:hi] += _noise(rng, hi - lo, TARGET_RMS_DB - 15.0)
    return track, placed


def _noise(rng: np.random.Generator, count: int, level_db: float) -> FloatAudio:
    """Noise with a falling spectrum (brown-ish, like a fan or traffic) at ``level_db``
    RMS."""
    white = rng.standard_normal(count)
    coloured = np.convolve(white, np.ones(8) / 8, mode="same")
    rms = float(np.sqrt(np.mean(np.square(coloured)))) or 1.0
    return (coloured * (10 ** (level_db / 20) / rms)).astype(np.float32)


def loud_between(track: FloatAudio, rate: int, start_s: float, end_s: float,
                 min_s: float = 0.03) -> bool:
    """Whether the speaker played at least ``min_s`` of audible samples in the span."""
    lo, hi = max(0, int(start_s * rate)), max(0, int(end_s * rate))
    return int(np.count_nonzero(np.abs(track[lo:hi]) > LOUD)) >= min_s * rate


def score(result: RunResult, placed: list[Placed]) -> list[dict[str, object]]:
    """Per request: V2V from the audio, and what the timeline says about that turn."""
    out, rate = result.output, result.sample_rate
    rows: list[dict[str, object]] = []
    for index, item in enumerate(placed):
        until = placed[index + 1].start_s if index + 1 < len(placed) else out.size / rate
        first = _answer_onset(out, rate, item.end_s, until)
        turn = _turn_for(result.turns, item)
        playing = loud_between(out, rate, item.start_s - 0.3, item.start_s)
        rows.append({
            "index": index + 1,
            "set": "held-out" if item.request.held_out else "tuning",
            "voice": item.request.voice,
            "said": item.request.text,
            "over_reply": playing,
            "stopped_after_s": _stopped_after(out, rate, item) if playing else None,
            "talked_over_user": loud_between(out, rate, item.start_s + 0.4, item.end_s - 0.1,
                                             0.15),
            "first_sound": None if first is None else first - item.end_s,
            "voice_to_voice": None if first is None else first - item.end_s + answer_delay_s(turn),
            "acknowledgement": turn.acknowledgement if turn else "",
            "transcript": turn.transcript if turn else "",
            "reply": turn.heard_text if turn else "",
            "prompt_tokens": turn.prompt_tokens if turn else None,
            "reused_tokens": turn.reused_tokens if turn else None,
            "stages": stage_costs(turn) if turn else {},
            "playback_gaps": turn.playback_gaps() if turn else [],
        })
    return rows


def _answer_onset(out: FloatAudio, rate: int, end_s: float, until_s: float) -> float | None:
    """The first loud sample after ``end_s`` that follows 100 ms of quiet: a reply still
    sounding when the user stops (one that did not stop for them, or began before they
    finished) is not the answer's start; ``talked_over_user`` reports those."""
    lo, hi = int(end_s * rate), int(until_s * rate)
    loud = np.flatnonzero(np.abs(out[lo:hi]) > LOUD)
    if loud.size == 0:
        return None
    quiet = int(0.1 * rate)
    start = lo + int(loud[0])
    if not np.any(np.abs(out[max(0, start - quiet):start]) > LOUD):
        return start / rate
    after_gap = np.flatnonzero(np.diff(loud) >= quiet)
    return None if after_gap.size == 0 else (lo + int(loud[after_gap[0] + 1])) / rate


def _turn_for(turns: list[TurnTimeline], item: Placed) -> TurnTimeline | None:
    """The confirmed turn whose speech ended nearest the request's end (within 1.5 s)."""
    near = [t for t in turns if t.speech_end is not None
            and abs(t.speech_end - item.end_s) <= 1.5]
    return min(near, key=lambda t: abs((t.speech_end or 0.0) - item.end_s), default=None)


def _stopped_after(out: FloatAudio, rate: int, item: Placed) -> float | None:
    """Seconds from the user's first sound to the reply going quiet (100 ms of silence)."""
    step = int(0.01 * rate)
    for at in range(int(item.start_s * rate), int(item.end_s * rate), step):
        if not np.any(np.abs(out[at:at + int(0.1 * rate)]) > LOUD):
            return at / rate - item.start_s
    return None


def report(rows: list[dict[str, object]]) -> dict[str, object]:
    """p50/p90/p99 for all, per set, turn 1 against turns 8-12, stages, gaps."""
    def v2v(selected: list[dict[str, object]]) -> list[float]:
        return [float(x) for r in selected if isinstance(x := r["voice_to_voice"], float)]

    found: dict[str, object] = {"machine": machine_name(), "requests": len(rows)}
    for name, selected in (("all", rows),
                           ("tuning", [r for r in rows if r["set"] == "tuning"]),
                           ("held_out", [r for r in rows if r["set"] == "held-out"])):
        values = v2v(selected)
        found[f"voice_to_voice_s_{name}"] = summary(values) if values else None
        found[f"no_reply_{name}"] = len(selected) - len(values)
    first, later = v2v(rows[:1]), v2v([r for r in rows if 8 <= int(str(r["index"])) <= 12])
    if first and later:
        found["turn_1_s"] = first[0]
        found["turns_8_12_median_s"] = float(np.median(later))
        found["drift_turns_8_12_vs_1"] = float(np.median(later)) / first[0]
    gaps = [float(g) for r in rows if isinstance(x := r["playback_gaps"], list) for g in x]
    found["gaps_over_150ms"] = sum(1 for g in gaps if g > GAP_S)
    stops = [float(s) for r in rows if isinstance(s := r["stopped_after_s"], float)]
    found["talk_over_stop_s"] = summary(stops) if stops else None
    found["talked_over_user"] = sum(1 for r in rows if r["talked_over_user"])
    found["acknowledged"] = sum(1 for r in rows if r["acknowledgement"])
    stages: dict[str, dict[str, float]] = {}
    for stage in ("end_of_turn_wait", "asr", "llm_first_token", "first_chunk",
                  "tts_first_audio", "to_first_sample"):
        values = [float(v) for r in rows if isinstance(s := r["stages"], dict)
                  and isinstance(v := s.get(stage), float)]
        if values:
            stages[stage] = summary(values)
    found["stages_s"] = stages
    return found


def _line(row: dict[str, object]) -> str:
    v2v = row["voice_to_voice"]
    stages = row["stages"] if isinstance(row["stages"], dict) else {}
    timeline = " ".join(f"{k}={v:.2f}" for k, v in stages.items() if isinstance(v, float))
    shown = f"{v2v:.3f} s" if isinstance(v2v, float) else "no reply"
    over = " (over the reply)" if row["over_reply"] else ""
    return f"{row['index']:>2} {row['set']:<8} {shown:>9}{over} {row['voice']}: {timeline}"


def main(args: argparse.Namespace) -> int:
    if args.requests < 12:
        raise SystemExit("hanasu bench conversation: --requests must be at least 12")
    requests = conversation(args.requests)
    if args.language != "en":
        from bench.conversation_cjk import PERSONA
        from bench.conversation_cjk import requests as cjk_requests

        requests = cjk_requests(args.language, args.requests)
        args.persona = args.persona or PERSONA[args.language]
    persona, engines = load_persona_and_engines(args)
    track, placed = build_track(requests, args.gap_s, args.noise_db)
    detector = build_turn_detector() if args.smart_turn and not args.fake_engines else None
    print(f"conversation: {len(placed)} requests, {track.size / RATE:.0f} s in real time",
          flush=True)
    config = PipelineConfig(gate=GateConfig(first_chunk_break_words=args.first_chunk_words),
                            endpoint=EndpointConfig(pause_ms=args.pause_ms),
                            transcribe_ahead=args.transcribe_ahead,
                            warm_history=args.warm_history)
    result = run_file(engines, persona, track, config, turn_detector=detector)
    rows = score(result, placed)
    for row in rows:
        print(_line(row), flush=True)
    found = report(rows)
    found["speculative_cancelled"] = result.speculative_cancelled
    print(json.dumps(found, indent=2))
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        write_audio(args.save / "microphone.wav", track, RATE)
        write_audio(args.save / "speaker.wav", result.output, result.sample_rate)
    if args.json:
        args.json.write_text(json.dumps({"summary": found, "turns": rows}, indent=2))
    return 0
