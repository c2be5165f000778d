"""``hanasu bench [name]``: the subparsers of every benchmark, registered on the app's one
argparse tree (``app/__main__.py``) when this package is importable.

``hanasu bench`` alone (with options) is the voice-to-voice latency bench (``latency.py``);
``hanasu bench <name>`` runs one of the others. Only the named one's module is imported, so
``bench ui``/``asr``/``gpu`` load only what they use (``gpu`` and ``tiers`` need the dev-only
``gguf``).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

SUBCOMMANDS = {
    "ui": ("bench.ui", "window, idle CPU and UI-stall benchmark"),
    "asr": ("bench.asr", "ASR word error rate and time: short window vs 30 s window"),
    "tts": ("bench.tts", "time to first audio per voice engine, gaps between chunks"),
    "decode": ("bench.decode", "LLM decode speed: sampler settings, prompt lookup"),
    "gpu": ("bench.gpu", "LLM TTFT, decode speed and memory on a random Gemma 4 GGUF"),
    "tiers": ("bench.tiers", "the CPU tiers' LLMs on this machine: first token, tok/s, RSS"),
    "conversation": ("bench.conversation",
                     "one long spoken conversation: V2V per turn from the audio, held-out set"),
    "turns": ("bench.turns", "end-of-turn cut-offs and late ends, barge-in, phantoms"),
    "echo": ("bench.echo", "what is left of its own voice after the echo canceller, per room"),
    "tools": ("bench.tools", "a tool round trip's cost; does a real model call set_timer"),
    "soak": ("bench.soak", "1,000 fake-engine turns on the window: RSS growth, GUI stalls"),
    "lipsync": ("bench.lipsync", "mouth-shape onsets against the played audio per voice"),
    "voices": ("bench.voices", "voice prints: same vs other voice similarity, time per print"),
    "room": ("bench.room", "a shared room: flatmates, a TV, the user over it; take-over rate"),
    "switch": ("bench.switch", "a persona switch until it can answer, per language"),
    "backchannels": ("bench.backchannels",
                     "'mm-hm', laughs and coughs over the reply against real interruptions"),
}
"""name -> (module with add_arguments/main, description)."""


def register(parser: argparse.ArgumentParser, argv: Sequence[str] = ()) -> None:
    """Adds the latency bench's options and one subparser per benchmark to ``parser``.

    ``argv`` is what follows ``bench`` on the command line: only the benchmark it names
    gets its options (its module imported); the others are listed with their description."""
    from bench import latency

    latency.add_arguments(parser)
    parser.set_defaults(bench_main=latency.main)
    sub = parser.add_subparsers(dest="bench_command", metavar="{" + ",".join(SUBCOMMANDS) + "}")
    wanted = argv[0] if argv else None
    for name, (module_name, description) in SUBCOMMANDS.items():
        child = sub.add_parser(name, help=description, description=description)
        if name == wanted:
            module = importlib.import_module(module_name)
            module.add_arguments(child)
            child.set_defaults(bench_main=module.main)


def main(args: argparse.Namespace) -> int:
    """Runs the benchmark ``register`` chose for the parsed command line."""
    return int(args.bench_main(args))
