"""``hanasu bench gpu``: what the production LLM path feels like, without downloading it.

Writes (or reuses) a random-weight GGUF with the Gemma 4 26B-A4B architecture
(``gemma4_gguf``; ``--small`` for scaled-down shapes on a CPU, as in CI) or takes a real
GGUF (``--gguf``), then measures through llama.cpp, with the app's own settings:

- cold TTFT: persona prefix + user turn evaluated from an empty cache, to the first token;
- warm TTFT: the persona prefix already cached (what every turn after the first costs);
- decode speed as ``(tokens - 1) / (t_last - t_first)``, and tokens per streamed chunk;
- memory: GPU memory (nvidia-smi) and process RSS after loading, and the KV cache size;
- ``swa_full`` on (the app's setting: prefix reuse needs it) vs off;
- ``n_gpu_layers`` as the app chooses it vs all layers (on a GPU build);
- ``--experts-on-cpu``: all layers on the GPU but the MoE experts in system RAM (llama.cpp's
  tensor overrides, ``-ot exps=CPU``), the 8-16 GB GPU tier.

Random weights say nothing about quality: the report says so; the speed is honest
because llama.cpp does the same arithmetic whatever the numbers are.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import time
from pathlib import Path
from typing import Any

import platformdirs

from app.gpu import first_gpu
from bench import gemma4_gguf

QUALITY_NOTE = (
    "random weights: these numbers say nothing about answer quality, only about speed "
    "(llama.cpp does the same work per token whatever the weights are)"
)
USER_TOKENS = 16
"""Tokens in the measured user turn (a short spoken question)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--small", action="store_true", help="scaled-down shapes (CPU, CI) instead of the real ones"
    )
    parser.add_argument("--gguf", type=Path, help="measure this GGUF instead of a random one")
    parser.add_argument(
        "--prefixes", default="500,1000,2000", help="persona prefix lengths in tokens"
    )
    parser.add_argument("--tokens", type=int, default=64, help="tokens to decode per run")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--cache", type=Path, help="folder for the random GGUF")
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument(
        "--experts-on-cpu", action="store_true",
        help="also measure the experts in system RAM, the rest on the GPU (8-16 GB GPU tier)")


def model_path(args: argparse.Namespace) -> tuple[Path, gemma4_gguf.Gemma4Shapes | None]:
    """The GGUF to measure: the user's, or the random one (written once, then reused)."""
    if args.gguf is not None:
        return args.gguf, None
    shapes = gemma4_gguf.SMALL if args.small else gemma4_gguf.REAL
    return gemma4_gguf.cached(shapes, args.cache or cache_folder()), shapes


def cache_folder() -> Path:
    """Where random benchmark models are kept between runs."""
    return platformdirs.user_cache_path("hanasu") / "bench"


def gpu_memory_mib() -> float | None:
    """GPU memory in use now (all processes), or None without nvidia-smi."""
    gpu = first_gpu()
    return gpu.used_bytes / 2**20 if gpu is not None and gpu.used_bytes is not None else None


def rss_mib() -> float:
    """Resident memory of this process now (Linux), else its peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def prompt_tokens(prefix: int, vocab_start: int, n_vocab: int) -> tuple[list[int], list[int]]:
    """A persona prefix of ``prefix`` tokens (BOS first) and a user turn, as token ids of
    ordinary vocabulary words, so the length is exact whatever the tokenizer."""
    span = max(1, n_vocab - vocab_start)
    persona = [gemma4_gguf.BOS] + [vocab_start + (i * 7919) % span for i in range(prefix - 1)]
    user = [vocab_start + (i * 104_729 + 13) % span for i in range(USER_TOKENS)]
    return persona, user


def timed_decode(llm: Any, tokens: list[int], count: int) -> dict[str, Any]:
    """Evaluate ``tokens`` on top of the cache and decode ``count`` tokens, timing each."""
    started = time.perf_counter()
    stamps: list[float] = []
    pieces = 0
    generator = llm.generate(tokens, reset=False, temp=0.7, top_k=40, top_p=0.95, min_p=0.05)
    try:
        for _ in range(count):
            token = next(generator)
            stamps.append(time.perf_counter())
            if llm.detokenize([token]):  # a piece the stream would yield now
                pieces += 1
    finally:
        generator.close()
    span = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    return {
        "ttft_s": stamps[0] - started,
        "decode_tok_s": (len(stamps) - 1) / span if span > 0 else None,
        "tokens": len(stamps),
        "tokens_per_chunk": len(stamps) / pieces if pieces else None,
    }


def measure(
    path: Path, args: argparse.Namespace, layers: int, swa_full: bool, prefixes: list[int],
    experts_on_cpu: bool = False,
) -> dict[str, Any]:
    """One model load (these settings), then cold and warm TTFT per prefix length."""
    import llama_cpp

    from bench.tensor_overrides import tensors_on_cpu

    before_gpu = gpu_memory_mib()
    started = time.perf_counter()
    with tensors_on_cpu() if experts_on_cpu else contextlib.nullcontext():
        llm: Any = llama_cpp.Llama(
            os.fspath(path),
            n_gpu_layers=layers,
            n_ctx=args.n_ctx,
            n_threads=args.threads,
            swa_full=swa_full,
            verbose=False,
        )
    load_s = time.perf_counter() - started
    after_gpu = gpu_memory_mib()
    result: dict[str, Any] = {
        "n_gpu_layers": layers,
        "experts_on_cpu": experts_on_cpu,
        "swa_full": swa_full,
        "load_s": load_s,
        "rss_mib": rss_mib(),
        "gpu_mib": None if before_gpu is None or after_gpu is None else after_gpu - before_gpu,
        "prefixes": {},
    }
    n_vocab = int(llm.n_vocab())
    start = len(gemma4_gguf.LEADING) + 256 if args.gguf is None else 1000
    try:
        for prefix in prefixes:
            persona, user = prompt_tokens(prefix, start, n_vocab)
            llm.reset()
            llm._ctx.kv_cache_clear()
            cold = timed_decode(llm, persona + user, args.tokens)
            # warm: as in the app's next turn, the cache holds persona + the last turn;
            # the last turn is dropped and only the new one is evaluated, when the cache
            # allows it (a window-sized SWA cache may not: then everything is redone).
            reused = bool(llm._ctx.kv_cache_seq_rm(-1, len(persona), -1))
            if reused:
                llm.n_tokens = len(persona)
                warm = timed_decode(llm, user[::-1], args.tokens)
            else:
                llm.reset()
                llm._ctx.kv_cache_clear()
                warm = timed_decode(llm, persona + user[::-1], args.tokens)
            warm["prefix_reused"] = reused
            result["prefixes"][str(prefix)] = {"cold": cold, "warm": warm}
            print(
                f"  layers {layers} swa_full {swa_full} prefix {prefix}: cold TTFT "
                f"{cold['ttft_s']:.3f} s, warm TTFT "
                f"{warm['ttft_s']:.3f} s (prefix reused: {reused}), "
                f"decode {cold['decode_tok_s'] or 0:.1f} tok/s",
                flush=True,
            )
    finally:
        llm.close()
    return result


def layer_choices(path: Path) -> dict[str, int]:
    """The app's automatic choice and 'all', on a GPU build; 0 (CPU) otherwise."""
    import llama_cpp

    if not bool(llama_cpp.llama_supports_gpu_offload()):
        return {"cpu": 0}
    from app.adapters.llama_load import auto_gpu_layers

    auto = auto_gpu_layers(llama_cpp, path)  # the app's own rule
    return {"auto": auto} if auto == -1 else {"auto": auto, "all": -1}


def main(args: argparse.Namespace) -> int:
    prefixes = [int(p) for p in args.prefixes.split(",") if p.strip()]
    path, shapes = model_path(args)
    import llama_cpp

    report: dict[str, Any] = {
        "note": QUALITY_NOTE if args.gguf is None else "real weights",
        "model": os.fspath(path),
        "model_gib": path.stat().st_size / 2**30,
        "shapes": None if shapes is None else shapes.__dict__,
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs, load {os.getloadavg()}",
        "gpu_build": bool(llama_cpp.llama_supports_gpu_offload()),
        "llama_cpp_python": llama_cpp.__version__,
        "n_ctx": args.n_ctx,
        "runs": [],
    }
    if shapes is not None:
        report["kv_cache_mib"] = {
            str(on): shapes.kv_bytes_per_token(on, args.n_ctx) * args.n_ctx / 2**20
            for on in (True, False)
        }
    print(f"{path} ({report['model_gib']:.2f} GiB); {report['note']}", flush=True)
    choices = layer_choices(path)
    if args.experts_on_cpu:
        choices["experts_cpu"] = -1 if report["gpu_build"] else 0
    for label, layers in choices.items():
        for swa_full in (True, False):
            run = measure(path, args, layers, swa_full, prefixes, label == "experts_cpu")
            run["layers_choice"] = label
            report["runs"].append(run)
    print(json.dumps(summary(report), indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """The figures people read first: TTFT per prefix, decode speed, memory, per run."""
    out: dict[str, Any] = {"note": report["note"], "gpu_build": report["gpu_build"]}
    for run in report["runs"]:
        key = f"{run['layers_choice']}_layers{run['n_gpu_layers']}_swa_full_{run['swa_full']}"
        out[key] = {
            "gpu_mib": run["gpu_mib"],
            "rss_mib": round(run["rss_mib"]),
            **{
                f"prefix_{p}": {
                    "cold_ttft_s": round(v["cold"]["ttft_s"], 3),
                    "warm_ttft_s": round(v["warm"]["ttft_s"], 3),
                    "warm_prefix_reused": v["warm"]["prefix_reused"],
                    "decode_tok_s": v["cold"]["decode_tok_s"],
                    "tokens_per_chunk": v["cold"]["tokens_per_chunk"],
                }
                for p, v in run["prefixes"].items()
            },
        }
    return out
