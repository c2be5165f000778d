"""``hanasu bench tiers``: how fast each CPU tier's language model runs on this machine.

For every CPU tier in the manifest (``placement = "cpu"``, not the embedded model) the
random-weight GGUF with its model's real Gemma 4 shapes (``gemma4_gguf``: E2B, E4B; the 26B
A4B, about 16 GB, only with ``--with-26b``) is written once into the cache folder, loaded as
the app loads it (CPU, ``swa_full``, the app's decode threads, every core for the prompt)
and measured ``--repeats`` times:

- warm first token: the persona prefix (``--prefix`` tokens) is already in the KV cache, as
  after the app's ``warm()``; only the new user turn (``--user-tokens``) is evaluated. This is
  what every turn costs.
- cold first token: persona and user turn from an empty cache (a persona just switched).
- first chunk: the time to the ``--chunk-tokens``-th token of the warm reply, about what the
  app's sentence gate waits for before the first words go to the voice.
- decode speed over ``--tokens`` tokens, and the process RSS after loading and after the
  runs (weights are memory-mapped: RSS counts the pages read, so rarely used rows of the
  per-layer embeddings stay on disk).

Median and p90 of each (for speeds, p90 is the slow end: the 10th percentile), a table in
Markdown and ``--json``. Random weights: the speed is honest, the text is noise.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import gemma4_gguf
from bench.gemma4_gguf import Gemma4Shapes
from bench.gpu import QUALITY_NOTE, cache_folder, rss_mib

SHAPES = {"e2b": gemma4_gguf.E2B, "e4b": gemma4_gguf.E4B, "production": gemma4_gguf.REAL}
SMALL_SHAPES = {"e2b": gemma4_gguf.E2B_SMALL, "e4b": gemma4_gguf.E4B_SMALL,
                "production": gemma4_gguf.SMALL}
"""The manifest's LLM variant -> the shapes of its random stand-in."""
BIG = "production"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--small", action="store_true",
                        help="scaled-down shapes of the same architectures (tests, CI)")
    parser.add_argument("--with-26b", action="store_true",
                        help="also measure the 26B A4B tier (writes a ~16 GB file once)")
    parser.add_argument("--prefix", type=int, default=500, help="persona prefix, tokens")
    parser.add_argument("--user-tokens", type=int, default=20, help="the new user turn")
    parser.add_argument("--tokens", type=int, default=32, help="tokens decoded per reply")
    parser.add_argument("--chunk-tokens", type=int, default=6,
                        help="tokens of the first spoken chunk")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None,
                        help="decode threads (default: the app's choice for this machine)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--cache", type=Path, help="folder for the random GGUFs")
    parser.add_argument("--json", type=Path, help="write the report here")


@dataclass(frozen=True)
class Job:
    tier: str
    title: str
    shapes: Gemma4Shapes


def jobs(args: argparse.Namespace) -> list[Job]:
    """One per CPU tier whose model has a random stand-in, in manifest order."""
    from app.models.catalog import load_catalog

    table = SMALL_SHAPES if args.small else SHAPES
    out = []
    for tier in load_catalog().tiers.values():
        if tier.placement != "cpu" or tier.llm not in table:
            continue
        if tier.llm == BIG and not args.with_26b:
            print(f"skipping {tier.name} ({tier.title}): pass --with-26b to measure it")
            continue
        out.append(Job(tier.name, tier.title, table[tier.llm]))
    return out


def cpu_name() -> str:
    """The CPU's model name, family and model, and whether it is a virtual machine's (Linux
    /proc/cpuinfo; else what the platform says)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    if "model name" not in fields:
        return platform.processor() or platform.machine()
    name = f"{fields['model name']} (family {fields.get('cpu family', '?')} model " \
           f"{fields.get('model', '?')}"
    virtual = "hypervisor" in fields.get("flags", "").split()
    return name + (", virtual machine)" if virtual else ")")


def machine() -> str:
    from app.models.machine import total_ram

    ram = total_ram()
    memory = f", {ram / 2**30:.0f} GiB RAM" if ram else ""
    return f"{cpu_name()}, {os.cpu_count()} logical cores{memory}, {platform.system()}"


def turn_tokens(count: int, start: int, n_vocab: int, turn: int) -> list[int]:
    """A user turn of ``count`` ordinary vocabulary words, different for every ``turn``."""
    span = max(1, n_vocab - start)
    return [start + (turn * 7_919 + i * 104_729 + 13) % span for i in range(count)]


def timed_reply(llm: Any, tokens: list[int], count: int) -> list[float]:
    """Evaluate ``tokens`` on top of the cache, decode ``count`` tokens; seconds from the
    call to each token."""
    started = time.perf_counter()
    stamps = []
    generator = llm.generate(tokens, reset=False, temp=0.7, top_k=40, top_p=0.95, min_p=0.05)
    try:
        for _ in range(count):
            next(generator)
            stamps.append(time.perf_counter() - started)
    finally:
        generator.close()
    return stamps


def decode_rate(stamps: list[float]) -> float:
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


def measure(path: Path, args: argparse.Namespace, threads: int | None) -> dict[str, Any]:
    """One load, then ``repeats`` x (a cold reply, a warm one) on the same persona."""
    import llama_cpp

    started = time.perf_counter()
    llm: Any = llama_cpp.Llama(os.fspath(path), n_gpu_layers=0, n_ctx=args.n_ctx,
                               n_threads=threads, swa_full=True, verbose=False)
    out: dict[str, Any] = {"load_s": time.perf_counter() - started, "rss_load_mib": rss_mib()}
    start = len(gemma4_gguf.LEADING) + 256
    n_vocab = int(llm.n_vocab())
    persona = [gemma4_gguf.BOS, *turn_tokens(args.prefix - 1, start, n_vocab, -1)]
    runs: dict[str, list[float]] = {k: [] for k in ("cold_ttft_s", "warm_ttft_s",
                                                    "first_chunk_s", "decode_tok_s")}
    try:
        llm.eval(persona)  # the app's warm(): also pages the weights in
        for turn in range(args.repeats):
            llm.reset()
            llm._ctx.kv_cache_clear()
            user = turn_tokens(args.user_tokens, start, n_vocab, 2 * turn)
            cold = timed_reply(llm, persona + user, args.tokens)
            if not llm._ctx.kv_cache_seq_rm(-1, len(persona), -1):
                raise RuntimeError("the KV cache cannot drop the last turn (swa_full off?)")
            llm.n_tokens = len(persona)
            warm = timed_reply(llm, turn_tokens(args.user_tokens, start, n_vocab, 2 * turn + 1),
                               args.tokens)
            runs["cold_ttft_s"].append(cold[0])
            runs["warm_ttft_s"].append(warm[0])
            runs["first_chunk_s"].append(warm[min(args.chunk_tokens, len(warm)) - 1])
            runs["decode_tok_s"].append(decode_rate(warm))
            print(f"    run {turn + 1}: cold {cold[0]:.2f} s, warm {warm[0]:.3f} s, "
                  f"decode {decode_rate(warm):.1f} tok/s", flush=True)
        out["rss_end_mib"] = rss_mib()  # mmap: the weights pages touched, plus the caches
    finally:
        llm.close()
    out["runs"] = runs
    out["stats"] = {key: stats(values, slow_is_low=key == "decode_tok_s")
                    for key, values in runs.items()}
    return out


def stats(values: list[float], slow_is_low: bool = False) -> dict[str, float]:
    """Median and p90 (the slow end: for a speed, the 10th percentile)."""
    return {"median": float(np.median(values)),
            "p90": float(np.percentile(values, 10 if slow_is_low else 90))}


def table(report: dict[str, Any]) -> str:
    """The report as a Markdown table, one row per tier."""
    head = ("| tier | model (random weights, real shapes) | file GiB | warm first token s "
            "| first chunk s | cold first token s | decode tok/s | RSS GiB |")
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for row in report["tiers"]:
        s = row["stats"]

        def pair(key: str, fmt: str, s: dict[str, Any] = s) -> str:
            return f"{s[key]['median']:{fmt}} / {s[key]['p90']:{fmt}}"

        lines.append(
            f"| {row['tier']} | {row['title']} | {row['file_gib']:.2f} "
            f"| {pair('warm_ttft_s', '.2f')} | {pair('first_chunk_s', '.2f')} "
            f"| {pair('cold_ttft_s', '.1f')} | {pair('decode_tok_s', '.1f')} "
            f"| {row['rss_end_mib'] / 1024:.1f} |")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    from app.adapters.llama_load import default_threads

    threads = args.threads if args.threads is not None else default_threads()
    import llama_cpp

    folder = args.cache or cache_folder()
    report: dict[str, Any] = {
        "note": QUALITY_NOTE,
        "machine": machine(),
        "load_before": os.getloadavg(),
        "llama_cpp_python": llama_cpp.__version__,
        "decode_threads": threads if threads is not None else "llama-cpp-python default",
        "prompt_threads": os.cpu_count(),
        "settings": {k: getattr(args, k) for k in ("prefix", "user_tokens", "tokens",
                                                   "chunk_tokens", "repeats", "n_ctx")},
        "tiers": [],
    }
    print(f"{report['machine']}; decode threads {report['decode_threads']}; "
          f"load {report['load_before']}", flush=True)
    for job in jobs(args):
        path = gemma4_gguf.cached(job.shapes, folder)
        print(f"  {job.tier}: {job.shapes.name} ({path.stat().st_size / 2**30:.2f} GiB)",
              flush=True)
        result = measure(path, args, threads)
        report["tiers"].append({"tier": job.tier, "title": job.title, "shapes": job.shapes.name,
                                "file_gib": path.stat().st_size / 2**30, **result})
    report["load_after"] = os.getloadavg()
    print(f"\n{report['machine']}; load {report['load_before']} -> {report['load_after']}; "
          f"median / p90 of {args.repeats}; {QUALITY_NOTE}\n\n{table(report)}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0
