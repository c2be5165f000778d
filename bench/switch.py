"""``hanasu bench switch``: how long a persona switch takes until it can answer.

The app's own path: one pipeline with the engines a new user has (the embedded models,
Whisper base and Kokoro for Japanese and Mandarin), started on the first persona, then
switched through the others in the sidebar's way (``use_persona`` with a fresh
conversation) and back. A switch is ready when the pipeline is idle for 50 ms: the
persona's prefix evaluated on the LLM thread, the recognizer for its languages and its
voices loaded (what ``app/ui/readiness.py`` waits for before the status line says so).
A switch back to a language already heard shows what stays loaded.

Target (issue 24): ready within 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

SWITCHES = ("yui", "hana", "ming", "kai", "yui", "ming", "hana")
"""From the first persona (hana): to Japanese, back, to Mandarin, to another English one,
and each language again."""
SETTLE_S = 0.05


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from app.cli.run import add_engine_arguments

    parser.add_argument("--json", type=Path, help="write the report here too")
    add_engine_arguments(parser)


def main(args: argparse.Namespace) -> int:
    from app.cli.run import load_persona_and_engines
    from app.core.pipeline import VoicePipeline
    from app.core.runtime.config import MonotonicClock
    from app.personas.loader import load_persona_library
    from app.personas.switch import persona_switch
    from bench.latency import machine_name, summary

    args.persona = args.persona or "hana"
    started = time.perf_counter()
    persona, engines = load_persona_and_engines(args)
    pipeline = VoicePipeline(engines, persona.full_system_prompt(), None, MonotonicClock())
    pipeline.use_persona(persona_switch(persona, fresh_conversation=True))
    pipeline.start()
    try:
        if not pipeline.idle.wait_idle(SETTLE_S, 300.0):
            raise SystemExit("hanasu bench switch: the first persona never got ready")
        first_ready = time.perf_counter() - started
        personas = load_persona_library()
        rows = []
        previous = persona.id
        for persona_id in SWITCHES:
            target = personas.get(persona_id)
            begun = time.perf_counter()
            pipeline.use_persona(persona_switch(target, fresh_conversation=True))
            ready = pipeline.idle.wait_idle(SETTLE_S, 120.0)
            seconds = time.perf_counter() - begun - SETTLE_S
            row = {"from": previous, "to": persona_id, "ready_s": round(seconds, 2),
                   "ready": ready}
            print(json.dumps(row), flush=True)
            rows.append(row)
            previous = persona_id
    finally:
        pipeline.stop()
    times = [float(r["ready_s"]) for r in rows]  # type: ignore[arg-type]
    report = {
        "machine": machine_name(), "load_average": os.getloadavg(),
        "start_to_first_persona_ready_s": round(first_ready, 2),
        "switch_ready_s": summary(times),
        "over_5_s": [f"{r['from']}->{r['to']}" for r in rows if float(r["ready_s"]) > 5.0],  # type: ignore[arg-type]
        "switches": rows,
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 0
