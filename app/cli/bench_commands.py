"""``hanasu bench <name>``: the benchmarks beside the voice-to-voice one (``bench.py``).

Kept apart from ``bench.py`` so that ``bench ui``/``asr``/``gpu`` load only what they use,
not the whole voice pipeline.
"""

from __future__ import annotations

import argparse
import importlib

SUBCOMMANDS = {
    "ui": ("app.cli.bench_ui", "window, idle CPU and UI-stall benchmark"),
    "asr": ("app.cli.bench_asr", "ASR word error rate and time: short window vs 30 s window"),
    "tts": ("app.cli.bench_tts", "time to first audio per voice engine, gaps between chunks"),
    "decode": ("app.cli.bench_decode", "LLM decode speed: sampler settings, prompt lookup"),
    "gpu": ("app.cli.bench_gpu", "LLM TTFT, decode speed and memory on a random Gemma 4 GGUF"),
    "turns": ("app.cli.bench_turns", "end-of-turn cut-offs and late ends, barge-in, phantoms"),
    "soak": ("app.cli.bench_soak", "1,000 fake-engine turns on the window: RSS growth, GUI stalls"),
}
"""name -> (module with add_arguments/main, description)."""


def run_subcommand(argv: list[str]) -> int | None:
    """Runs ``hanasu bench <name> ...`` when ``argv[0]`` names one; None otherwise (then
    ``argv`` is the plain voice-to-voice bench's)."""
    if not argv or argv[0] not in SUBCOMMANDS:
        return None
    module_name, description = SUBCOMMANDS[argv[0]]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"hanasu bench {argv[0]}", description=description)
    module.add_arguments(parser)
    return int(module.main(parser.parse_args(argv[1:])))
