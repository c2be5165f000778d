"""``hanasu bench backchannels``: "mm-hm", a laugh or a cough over the reply, against a real
interruption.

Each case is one spoken scene through the whole pipeline in real time (real Silero VAD,
Whisper tiny.en, Smart Turn; a scripted model and a tone voice, so only hearing and
turn-taking are measured): the user asks for a story and, three seconds into the reply,

- makes a listener's noise ("Mm-hm.", "Yeah, yeah.", "Ha ha ha!", a cough...): the reply
  should play on, neither paused nor stopped, and the noise get no answer;
- or interrupts ("Wait, what time is it?"): the reply should stop at once and the request
  be answered;
- or, after a short reply that asked nothing, says "Yeah." or "Okay." within a second of its
  end: no new answer (Full-Duplex-Bench's backchannel case after a turn).

Reported per kind, as Full-Duplex-Bench v1.5 counts its backchannel and interruption
cases: the share of backchannels that paused the reply, stopped it, or got an answer of
their own (its take-over rate), the longest silence they caused inside the reply, and the
interruptions' stop time (voice onset to the reply pausing), misses and answers.

Where it differs from that benchmark: synthetic voices (Piper, eSpeak NG) saying the
noises, a cough made of shaped noise, no loudspeaker echo, and a scripted model.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from app.core.events import FloatAudio

RATE = 16_000
BACKCHANNELS = ("Mm-hm.", "Uh-huh.", "Yeah.", "Right.", "Okay.", "Yeah, yeah.", "Oh, wow.",
                "I see.", "Ha ha ha!", "Hmm.")
INTERRUPTIONS = ("Wait, what time is it?", "Stop. Tell me a joke instead.",
                 "Actually, how far away is the moon?", "Hold on, can you say that again?")
AFTER_A_REPLY = ("Yeah.", "Okay.")
STORY = ("Once upon a time, by a quiet sea, there lived an old fisherman who sang every "
         "morning about the waves and the wind and the stars.")
"""About nine seconds in the tone voice: the noise comes two or three seconds into it."""
SHORT_REPLY = "Paris is the capital of France."
INTO_THE_REPLY_S = 3.0
"""The noise or interruption begins this long after the request ends (the reply is playing)."""
AFTER_THE_REPLY_S = 3.3
"""The acknowledgement after the short reply begins this long after the request ends
(the reply of ~1.9 s has ended about 0.6-0.9 s before)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--voices", type=int, default=3, help="voices of bench turns to use")
    parser.add_argument("--first-voice", type=int, default=0,
                        help="skip this many of them (to split a run)")
    parser.add_argument("--json", type=Path, help="write the report here too")


def cough(seed: int) -> FloatAudio:
    """A dry cough: a 40 ms attack of broadband noise, then a 200 ms decay, low-passed a
    little as a chest does."""
    rng = np.random.default_rng(seed)
    n = int(0.24 * RATE)
    envelope = np.minimum(np.arange(n) / (0.04 * RATE), 1.0) * np.exp(-np.arange(n) / (0.07 * RATE))
    noise = np.convolve(rng.standard_normal(n), np.ones(4) / 4, mode="same")
    return (0.3 * envelope * noise).astype(np.float32)


def run_case(engines_real: object, voices: object, voice: str, kind: str, said: str
             ) -> dict[str, object]:
    from app.adapters.fakes import FakeLanguageModel, FakeSynthesizer
    from app.cli.file_session import run_file
    from app.core.pipeline import Engines
    from app.personas import load_personas
    from bench.turns import _silence

    say = voices.say  # type: ignore[attr-defined]
    ask = say(voice, "Tell me the capital of France." if kind == "after" else
              "Tell me a long story, please.")
    noise = cough(len(said)) if said == "(cough)" else say(voice, said)
    start = 0.6
    ask_end = start + ask.size / RATE
    noise_at = ask_end + (AFTER_THE_REPLY_S if kind == "after" else INTO_THE_REPLY_S)
    audio = np.concatenate([_silence(start), ask, _silence(noise_at - ask_end), noise,
                            _silence(4.0)])
    real = engines_real
    engines = Engines(real.vad, real.asr,  # type: ignore[attr-defined]
                      FakeLanguageModel(reply=SHORT_REPLY if kind == "after" else STORY,
                                        token_delay_s=0.02), FakeSynthesizer())
    result = run_file(engines, load_personas().default, audio, max_wait_s=40.0)
    noise_end = noise_at + noise.size / RATE
    # the reply paused for this voice, not for the request going on over its own reply
    pauses = [at - onset for onset, at in result.reply_pauses if onset >= noise_at - 0.3]
    request = [t for t in result.turns if t.speech_start is not None
               and t.speech_start < ask_end and (t.reply_text or t.heard_text)]
    first = request[0] if request else None
    others = [t for t in result.turns if t.speech_start is not None
              and t.speech_start >= noise_at - 0.4 and (t.reply_text or t.heard_text)]
    return {
        "kind": kind, "voice": voice, "said": said,
        "paused": bool(pauses),
        "stop_s": round(min(pauses), 3) if pauses else None,
        "stopped": any(t.barge_in for t in result.turns),
        "answered": [t.transcript for t in others],
        "heard_as": [t.transcript for t in result.dropped if t.transcript],
        "longest_silence_in_reply_s": _longest_silence(result.output, result.sample_rate,
                                                       noise_at, noise_end + 2.0),
        "after_reply_end_s": (round(noise_at - first.playback_ended, 2)
                              if first and first.playback_ended is not None else None),
    }


def _longest_silence(output: FloatAudio, rate: int, begin: float, end: float) -> float:
    """The longest run of silent 10 ms blocks in ``output`` from ``begin`` to ``end`` (or to
    the output's last sound, if sooner): how long the reply went quiet there."""
    block = rate // 100
    loud = np.flatnonzero(np.abs(output) > 1e-3)
    if loud.size == 0:
        return 0.0
    end = min(end, loud[-1] / rate)
    blocks = output[int(begin * rate):int(end * rate)]
    blocks = blocks[:blocks.size - blocks.size % block].reshape(-1, block)
    longest = run = 0
    for quiet in np.max(np.abs(blocks), axis=1) < 1e-3:
        run = run + 1 if quiet else 0
        longest = max(longest, run)
    return round(longest / 100, 2)


def _share(flags: list[bool]) -> str:
    return f"{sum(flags)} of {len(flags)}"


def summarise(cases: list[dict[str, object]]) -> dict[str, object]:
    from bench.latency import summary

    noises = [c for c in cases if c["kind"] == "backchannel"]
    interruptions = [c for c in cases if c["kind"] == "interruption"]
    after = [c for c in cases if c["kind"] == "after"]
    stops = [float(c["stop_s"]) for c in interruptions  # type: ignore[arg-type]
             if c["stop_s"] is not None]
    return {
        "backchannels_over_the_reply": {
            "paused": _share([bool(c["paused"]) for c in noises]),
            "stopped": _share([bool(c["stopped"]) for c in noises]),
            "take_over_rate": round(sum(bool(c["answered"]) for c in noises)
                                    / max(1, len(noises)), 3),
            "longest_silence_s": summary([float(c["longest_silence_in_reply_s"])  # type: ignore[arg-type]
                                          for c in noises]) if noises else None,
            "paused_by": sorted({str(c["said"]) for c in noises if c["paused"]}),
        },
        "interruptions": {
            "stopped": _share([bool(c["stopped"]) for c in interruptions]),
            "answered": _share([bool(c["answered"]) for c in interruptions]),
            "stop_s": summary(stops) if stops else None,
        },
        "backchannels_after_a_reply": {
            "take_over_rate": round(sum(bool(c["answered"]) for c in after)
                                    / max(1, len(after)), 3),
            "after_reply_end_s": sorted(c["after_reply_end_s"] for c in after  # type: ignore[type-var]
                                        if c["after_reply_end_s"] is not None),
        },
    }


def main(args: argparse.Namespace) -> int:
    from app.engines import EngineChoice, build_engines
    from bench.latency import machine_name
    from bench.turns import VOICES, Voices

    real = build_engines(EngineChoice())
    report: dict[str, object] = {"machine": machine_name(), "load_average": os.getloadavg()}
    cases: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        voices = Voices(Path(tmp))
        for engine, name, _wpm in VOICES[args.first_voice:args.first_voice + args.voices]:
            voice = f"{engine}:{name}"
            plan = ([("backchannel", said) for said in (*BACKCHANNELS, "(cough)")]
                    + [("interruption", said) for said in INTERRUPTIONS]
                    + [("after", said) for said in AFTER_A_REPLY])
            for kind, said in plan:
                case = run_case(real, voices, voice, kind, said)
                print(json.dumps(case), flush=True)
                cases.append(case)
    report.update(summarise(cases))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 0
