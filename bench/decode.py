"""``hanasu bench decode``: how fast the LLM speaks, per sampler setting and drafting.

Each variant loads the model afresh (the app's thread count unless ``--llm-threads``),
warms the default persona's prefix as the app does, then streams a reply to each spoken
question of ``bench`` through the app's own decode loop (``LlamaLanguageModel.stream``).
Decode speed is ``(tokens - 1) / (t_last - t_first)`` per reply, so the prompt does not
count; the first token's time is reported beside it. Variants:

- ``app``: the app's sampler (temperature 0.7, top-k 40, top-p 0.95, min-p 0.05);
- ``greedy``: top-k 1 (what a sampler costs at most);
- ``topk``: top-k 40 alone;
- ``lookupN``: the app's sampler with N tokens drafted by prompt lookup.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.adapters.sampling import SamplingConfig
from app.cli.run import add_llm_threads_argument
from app.core.ports import ChatMessage
from bench.latency import QUESTIONS, machine_name, summary

APP = SamplingConfig()
VARIANTS: dict[str, tuple[SamplingConfig, int]] = {
    "app": (APP, 0),
    "greedy": (replace(APP, top_k=1, top_p=1.0, min_p=0.0, temperature=0.0), 0),
    "topk": (replace(APP, top_p=1.0, min_p=0.0), 0),
    "lookup2": (APP, 2),
    "lookup4": (APP, 4),
    "lookup10": (APP, 10),
}
"""name -> (sampling, tokens drafted by prompt lookup)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--llm", type=Path, help="GGUF model file (default: the app's)")
    add_llm_threads_argument(parser)
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"comma-separated, of: {', '.join(VARIANTS)}")
    parser.add_argument("--questions", type=int, default=12, help="replies per variant")
    parser.add_argument("--max-tokens", type=int, default=60, help="tokens per reply at most")
    parser.add_argument("--json", type=Path, help="write the report here too")


def measure(model: Any, system_prompt: str, questions: list[str], max_tokens: int
            ) -> dict[str, Any]:
    """Decode speed and first-token time over one reply per question."""
    system = ChatMessage("system", system_prompt)
    model.warm([system])
    rates, firsts, tokens = [], [], 0
    for question in questions:
        started = time.perf_counter()
        stamps: list[float] = []
        for _piece in model.stream([system, ChatMessage("user", question)], lambda: False):
            stamps.append(time.perf_counter())
            if len(stamps) >= max_tokens:
                break
        if not stamps:
            continue
        firsts.append(stamps[0] - started)
        tokens += len(stamps)
        if len(stamps) > 2:
            rates.append((len(stamps) - 1) / (stamps[-1] - stamps[0]))
    return {
        "decode_tokens_per_s": summary(rates) if rates else None,
        "first_token_s": summary(firsts) if firsts else None,
        "tokens": tokens,
    }


def main(args: argparse.Namespace) -> int:
    from app.adapters.llama_llm import LlamaLanguageModel
    from app.adapters.llama_load import default_threads
    from app.models.resolve import resolve
    from app.personas import load_persona_library

    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"hanasu bench decode: unknown variant(s) {', '.join(unknown)} "
                         f"(known: {', '.join(VARIANTS)})")
    path = args.llm or resolve("llm").path
    threads = args.llm_threads or default_threads()
    prompt = load_persona_library().default.full_system_prompt()
    questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(max(1, args.questions))]
    report: dict[str, Any] = {"machine": machine_name(), "model": str(path),
                              "threads": threads, "variants": {}}
    for name in names:
        sampling, lookup = VARIANTS[name]
        model = LlamaLanguageModel(path, n_threads=threads, prompt_lookup_tokens=lookup,
                                   sampling=replace(sampling, max_tokens=args.max_tokens))
        result = measure(model, prompt, questions, args.max_tokens)
        result["load_avg_1m"] = os.getloadavg()[0]
        report["variants"][name] = result
        rate, first = result["decode_tokens_per_s"], result["first_token_s"]
        print(f"{name:9s} decode p50 {rate['p50'] if rate else 0:6.1f} tok/s, first token p50 "
              f"{first['p50'] if first else 0:.3f} s, load {result['load_avg_1m']:.2f}",
              flush=True)
        del model
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0
