"""The one GPU probe: name and memory of the NVIDIA GPUs, read from ``nvidia-smi``.

Used by the LLM loader (how many layers fit in free memory), the model manager (does the
production model fit) and the benchmarks (which machine, how much memory in use). It shells out
rather than linking a GPU library so the app has no CUDA dependency, and it never raises:
no driver, no GPU, a hung or broken ``nvidia-smi`` or output it cannot read all mean "no GPU".
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

TIMEOUT_S = 3.0
"""A wedged driver can make nvidia-smi hang; nobody should wait on it for long."""

_MIB = 1024 * 1024
_QUERY = "--query-gpu=name,memory.total,memory.free,memory.used"


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_bytes: int
    """Total memory."""
    free_bytes: int | None = None
    """Free now (None when the driver does not report it)."""
    used_bytes: int | None = None
    """In use now by all processes (None when the driver does not report it)."""


def _mib(field: str) -> int | None:
    try:
        return int(float(field)) * _MIB
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None


def _parse(line: str) -> Gpu | None:
    parts = line.rsplit(",", 3)
    if len(parts) != 4 or not parts[0].strip():
        return None
    total = _mib(parts[1])
    if total is None or total <= 0:
        return None
    return Gpu(parts[0].strip(), total, _mib(parts[2]), _mib(parts[3]))


def nvidia_gpus(timeout_s: float = TIMEOUT_S) -> list[Gpu]:
    """Every NVIDIA GPU ``nvidia-smi`` reports with a readable total memory; [] when none."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run(
            [exe, _QUERY, "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        return []
    return [gpu for line in out.splitlines() if (gpu := _parse(line)) is not None]


def first_gpu(timeout_s: float = TIMEOUT_S) -> Gpu | None:
    """The first NVIDIA GPU (the one llama.cpp fills first), or None."""
    gpus = nvidia_gpus(timeout_s)
    return gpus[0] if gpus else None


def driver_version(timeout_s: float = TIMEOUT_S) -> str | None:
    """The NVIDIA driver version (for `hanasu doctor`), or None; never raises."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        return None
    first = out.strip().splitlines()[0].strip() if out.strip() else ""
    return first or None
