"""What this machine can run: GPU and free memory, the llama-cpp-python build, RAM, cores, disk.

Everything is read through `MachineProbe`, a small port, so the tier choice (app/models/tiers.py)
is tested against a table of simulated machines; `SystemProbe` is the real one. No probe raises:
a missing `nvidia-smi`, a missing or broken llama-cpp-python, an unreadable memory size all come
back as "unknown" (None) or "none", and the choice then errs on the side of the smaller model.
Nothing here touches the network.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from app.gpu import Gpu, first_gpu

log = logging.getLogger(__name__)

Build = Literal["CUDA", "Metal", "Vulkan", "ROCm", "CPU", "missing"]
_BACKEND_LIBS: tuple[tuple[str, Build], ...] = (
    ("ggml-cuda", "CUDA"), ("ggml-metal", "Metal"), ("ggml-vulkan", "Vulkan"),
    ("ggml-hip", "ROCm"),
)


@dataclass(frozen=True)
class LlamaBuild:
    """The llama-cpp-python actually installed."""

    version: str | None
    """None when llama-cpp-python is not installed (or cannot be loaded)."""
    kind: Build
    gpu_offload: bool
    """`llama_cpp.llama_supports_gpu_offload()`: whether layers can go to a GPU at all."""
    experts_offload: bool = False
    """Whether the app can keep MoE expert tensors in system RAM (llama.cpp tensor overrides)."""


@dataclass(frozen=True)
class MachineFacts:
    """One measurement of the machine, as the tier choice needs it."""

    system: str
    gpu: Gpu | None
    llama: LlamaBuild
    ram_bytes: int | None
    cores: int
    disk_free_bytes: int | None

    @property
    def usable_vram(self) -> int:
        """GPU memory the LLM may use: free memory when the driver says, else the total;
        on Apple silicon (Metal, unified memory) about two thirds of the RAM."""
        if self.gpu is not None:
            return self.gpu.free_bytes if self.gpu.free_bytes is not None else self.gpu.memory_bytes
        if self.llama.kind == "Metal" and self.llama.gpu_offload and self.ram_bytes:
            return self.ram_bytes * 2 // 3
        return 0


class MachineProbe(Protocol):
    """The port: each question about the machine, answered without raising."""

    def system(self) -> str: ...

    def gpu(self) -> Gpu | None: ...

    def llama(self) -> LlamaBuild: ...

    def ram_bytes(self) -> int | None: ...

    def cores(self) -> int: ...

    def disk_free_bytes(self, path: Path) -> int | None: ...


def measure(probe: MachineProbe, models_dir: Path) -> MachineFacts:
    """Ask the probe everything once (off the GUI thread: nvidia-smi and llama.cpp are slow)."""
    return MachineFacts(
        system=probe.system(),
        gpu=probe.gpu(),
        llama=probe.llama(),
        ram_bytes=probe.ram_bytes(),
        cores=max(1, probe.cores()),
        disk_free_bytes=probe.disk_free_bytes(models_dir),
    )


class SystemProbe:
    """The real machine."""

    def system(self) -> str:
        import platform

        return f"{platform.system()} {platform.release()} ({platform.machine()})"

    def gpu(self) -> Gpu | None:
        return first_gpu()

    def llama(self) -> LlamaBuild:
        return llama_build()

    def ram_bytes(self) -> int | None:
        return total_ram()

    def cores(self) -> int:
        if hasattr(os, "sched_getaffinity"):
            with contextlib.suppress(OSError):
                return len(os.sched_getaffinity(0))
        return os.cpu_count() or 1

    def disk_free_bytes(self, path: Path) -> int | None:
        probe = path
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        try:
            return shutil.disk_usage(probe).free
        except OSError:
            return None


def llama_build() -> LlamaBuild:
    """Which llama-cpp-python is installed and what it was built for (imports it: slow)."""
    try:
        import llama_cpp
    except Exception as exc:  # not installed, or its shared library does not load
        log.info("llama-cpp-python is not usable: %s", exc)
        return LlamaBuild(None, "missing", False)
    version = str(getattr(llama_cpp, "__version__", "?"))
    try:
        offload = bool(llama_cpp.llama_supports_gpu_offload())
    except Exception:  # an old binding without the function
        offload = False
    kind: Build = "CPU"
    lib = Path(llama_cpp.__file__).parent / "lib"
    names = [p.name for p in lib.iterdir()] if lib.is_dir() else []
    for stem, backend in _BACKEND_LIBS:
        if any(stem in name for name in names):
            kind = backend
            break
    else:
        if offload:  # a static build: the backend is not a separate library
            kind = "Metal" if sys.platform == "darwin" else "CUDA"
    # llama-cpp-python (0.3.x) declares `tensor_buft_overrides` but leaves it unused;
    # bench/tensor_overrides.py fills it in (bench gpu --experts-on-cpu), but the app's LLM
    # adapter places whole layers only, so the app cannot run that tier yet.
    return LlamaBuild(version, kind, offload, experts_offload=False)


def total_ram() -> int | None:
    """Physical memory in bytes, or None when the OS will not say."""
    if sys.platform == "win32":
        return _windows_ram()
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        pass
    if sys.platform == "darwin":
        import subprocess

        try:
            out = subprocess.run(["sysctl", "-n", "hw.memsize"], capture_output=True, text=True,
                                 timeout=3, check=True).stdout
            return int(out.strip())
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
    return None


def _windows_ram() -> int | None:
    import ctypes

    class _Status(ctypes.Structure):
        _fields_ = [("length", ctypes.c_ulong), ("load", ctypes.c_ulong),
                    ("total", ctypes.c_ulonglong), ("avail", ctypes.c_ulonglong),
                    ("total_page", ctypes.c_ulonglong), ("avail_page", ctypes.c_ulonglong),
                    ("total_virtual", ctypes.c_ulonglong), ("avail_virtual", ctypes.c_ulonglong),
                    ("avail_ext", ctypes.c_ulonglong)]

    status = _Status()
    status.length = ctypes.sizeof(_Status)
    try:
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
            return int(status.total)
    except (AttributeError, OSError):
        pass
    return None
