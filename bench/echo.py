"""``hanasu bench echo``: how much of its own voice the listener still hears on loudspeakers.

A spoken question, then a long reply played through the app's own output path (the
``OutputRing`` a device reads) into a simulated room; the microphone hears the room. The
echo canceller's input and output are recorded on the way to the VAD, and from the reply's
first sample (plus the room's delay) on, every 30 ms window of what is left is measured:
the residual's level (p50, p99, worst) and the windows loud enough for the VAD to notice
(over -46 dBFS), with the echo return loss enhancement (input over output, p10 and p50).
The room never hears the user here: every sound left is the assistant's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from app.core.events import FloatAudio

RATE = 16_000
WINDOW = 480  # 30 ms
AUDIBLE = 0.005
"""Residual RMS over this (-46 dBFS) in a 30 ms window is a frame the VAD may notice."""
QUESTION = "Can you tell me a long story about the sea, with a storm and a lighthouse?"
ROOMS = ((0.02, 0.9), (0.08, 0.6), (0.15, 0.3))
"""(delay s, gain): a laptop's speakers close by, a desk, a room."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=2, help="replies per room")
    parser.add_argument("--json", type=Path, help="write the report here too")


class RecordingCanceller:
    """The real canceller, with what went in and came out kept for scoring."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.output_delay_samples: int = getattr(inner, "output_delay_samples", 0)
        self.sample_rate = RATE
        self.captured: list[FloatAudio] = []
        self.processed: list[FloatAudio] = []

    def add_reference(self, played: FloatAudio) -> None:
        self.inner.add_reference(played)  # type: ignore[attr-defined]

    def process(self, captured: FloatAudio) -> FloatAudio:
        out: FloatAudio = self.inner.process(captured)  # type: ignore[attr-defined]
        self.captured.append(captured.copy())
        self.processed.append(out.copy())
        return out

    def reset(self) -> None:
        self.inner.reset()  # type: ignore[attr-defined]


def residual_report(captured: FloatAudio, processed: FloatAudio, delay_samples: int,
                    start_s: float) -> dict[str, float | int]:
    """Scores what is left after the canceller from ``start_s`` (stream seconds) on."""
    out = processed[delay_samples:]
    raw = captured[:out.size]
    start = int(start_s * RATE)
    levels, erle = [], []
    for at in range(start, out.size - WINDOW + 1, WINDOW):
        level = float(np.sqrt(np.mean(np.square(out[at:at + WINDOW]))))
        levels.append(level)
        heard = float(np.mean(np.square(raw[at:at + WINDOW])))
        if heard > 1e-5:  # the room was playing something
            erle.append(10 * np.log10(heard / (level * level + 1e-12)))
    if not levels:
        return {"windows": 0}
    return {
        "windows": len(levels),
        "residual_rms_p50": round(float(np.median(levels)), 5),
        "residual_rms_p99": round(float(np.percentile(levels, 99)), 5),
        "residual_rms_max": round(max(levels), 5),
        "audible_windows": sum(level > AUDIBLE for level in levels),
        "erle_db_p10": round(float(np.percentile(erle, 10)), 1) if erle else 0.0,
        "erle_db_p50": round(float(np.median(erle)), 1) if erle else 0.0,
    }


def _question(tmp: Path) -> FloatAudio:
    from app.adapters.file_audio import read_audio

    path = tmp / "question.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), QUESTION],
                   check=True)
    speech = read_audio(path)
    return np.concatenate([np.zeros(RATE // 2, np.float32), speech,
                           np.zeros(16 * RATE, np.float32)])


def main(args: argparse.Namespace) -> int:
    from app.cli.file_session import RoomSimulation, run_file
    from app.engines import EngineChoice, build_echo_canceller, build_engines, warm_engines
    from app.personas import load_personas
    from bench.latency import machine_name

    persona = load_personas().default
    engines = build_engines(EngineChoice())
    warm_engines(engines, persona.full_system_prompt())
    report: dict[str, object] = {"machine": machine_name(), "load_average": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        audio = _question(Path(tmp))
        for delay, gain in ROOMS:
            rows: list[dict[str, float | int]] = []
            for _ in range(args.runs):
                canceller = RecordingCanceller(build_echo_canceller())
                result = run_file(engines, persona, audio, max_wait_s=30, echo=canceller,
                                  room=RoomSimulation(delay_s=delay, gain=gain))
                first = result.turns[0].first_sample_played if result.turns else None
                if first is None or not canceller.processed:
                    rows.append({"windows": 0})
                    continue
                row = residual_report(np.concatenate(canceller.captured),
                                      np.concatenate(canceller.processed),
                                      canceller.output_delay_samples, first + delay)
                row["turns"] = len(result.turns)  # more than one: it heard itself
                print(json.dumps({"delay_s": delay, "gain": gain, **row}), flush=True)
                rows.append(row)
            report[f"room delay {delay} s, gain {gain}"] = _combine(rows)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def _combine(rows: Sequence[dict[str, float | int]]) -> dict[str, object]:
    scored = [r for r in rows if r.get("windows")]
    if not scored:
        return {"runs": len(rows), "scored": 0}
    return {
        "runs": len(rows),
        "scored": len(scored),
        "residual_rms_p99_worst_run": max(float(r["residual_rms_p99"]) for r in scored),
        "audible_windows": sum(int(r["audible_windows"]) for r in scored),
        "windows": sum(int(r["windows"]) for r in scored),
        "erle_db_p50_median": float(np.median([float(r["erle_db_p50"]) for r in scored])),
        "replies_that_heard_themselves": sum(int(r.get("turns", 1)) > 1 for r in scored),
    }
