"""Which tier of models this machine should run, and why, in one line.

A pure function of the manifest's tiers (best first) and one measurement of the machine
(app/models/machine.py): the first tier the machine meets is recommended. Memory figures in the
manifest are GiB, as operating systems and drivers count them (a "12 GB" card reports 12 GiB,
a "32 GB" laptop about 31 GiB, hence the manifest's round-down thresholds).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from app.models.catalog import EMBEDDED, Catalog, Tier
from app.models.machine import MachineFacts
from app.models.units import human

GIB = 1 << 30
DISK_MARGIN_BYTES = 1 << 30
"""Left free after a download, so the disk is not filled to the last byte."""
_REINSTALL = "pip install --force-reinstall --no-cache-dir llama-cpp-python"
CUDA_COMMAND = f'CMAKE_ARGS="-DGGML_CUDA=on" {_REINSTALL}'
METAL_COMMAND = f'CMAKE_ARGS="-DGGML_METAL=on" {_REINSTALL}'
FIX_COMMANDS = (CUDA_COMMAND, METAL_COMMAND)
"""Commands inside the warnings, which a window shows on a line of their own."""
CUDA_FIX = f"reinstall it with CUDA: {CUDA_COMMAND}"
METAL_FIX = f"reinstall it with Metal: {METAL_COMMAND}"
EXPERTS_NOT_YET = ("needs the experts kept in system RAM, which this version of Hanasu "
                   "cannot do yet")
_VENDOR_PREFIXES = ("NVIDIA GeForce ", "NVIDIA ", "GeForce ")


@dataclass(frozen=True)
class Recommendation:
    """The chosen tier, the one line that explains it, and what else the user should know."""

    tier: Tier
    reason: str
    download_bytes: int
    """What the tier still needs to download (0 when everything is present or embedded)."""
    warnings: tuple[str, ...] = ()
    passed_over: tuple[tuple[str, str], ...] = ()
    """(tier name, why not) for each better tier the machine does not meet."""


def gpu_label(facts: MachineFacts) -> str | None:
    """"RTX 3060 12 GB", "Apple GPU 32 GB (unified memory)", or None without a usable GPU."""
    if facts.gpu is not None:
        name = facts.gpu.name
        for prefix in _VENDOR_PREFIXES:
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        return f"{name} {round(facts.gpu.memory_bytes / GIB)} GB"
    if facts.llama.kind == "Metal" and facts.llama.gpu_offload and facts.ram_bytes:
        return f"Apple GPU {round(facts.ram_bytes / GIB)} GB (unified memory)"
    return None


def machine_label(facts: MachineFacts, on_gpu: bool = True) -> str:
    """The machine in a few words, as the reason starts: the GPU when the model runs there,
    else RAM and cores, and what became of the GPU."""
    gpu = gpu_label(facts)
    if on_gpu and gpu is not None and facts.llama.gpu_offload:
        return gpu
    ram = f"{round(facts.ram_bytes / GIB)} GB RAM" if facts.ram_bytes else "unknown RAM"
    cpu = f"{ram}, {facts.cores} cores"
    if gpu is None:
        return f"{cpu}, no GPU"
    if not facts.llama.gpu_offload:
        return f"{cpu} ({gpu} unused)"
    return f"{cpu} ({gpu}: too small for these models)"


def download_bytes(catalog: Catalog, tier: Tier, present: Collection[str]) -> int:
    """Bytes a tier still needs; `present` holds "role.variant" for models already there."""
    return sum(e.expected_size for e in catalog.tier_entries(tier)
               if e.downloadable and f"{e.role}.{e.variant}" not in present)


def why_not(catalog: Catalog, tier: Tier, facts: MachineFacts,
            present: Collection[str] = ()) -> str | None:
    """None when the machine meets the tier, else the first reason it does not."""
    if tier.llm == EMBEDDED and tier.asr == EMBEDDED and tier.tts == EMBEDDED:
        return None  # the fallback: always there
    if tier.placement != "cpu":
        if not facts.llama.gpu_offload:
            return "no GPU the language model can use"
        if tier.placement == "experts-cpu" and not facts.llama.experts_offload:
            return EXPERTS_NOT_YET
        vram = facts.usable_vram
        if vram < tier.min_vram_gb * GIB:
            return f"needs {tier.min_vram_gb:g} GB of free GPU memory, {vram / GIB:.1f} GB free"
    ram = facts.ram_bytes or 0
    if ram < tier.min_ram_gb * GIB:
        return f"needs {tier.min_ram_gb:g} GB of RAM, {ram / GIB:.0f} GB here"
    if facts.cores < tier.min_cores:
        return f"needs {tier.min_cores} CPU cores, {facts.cores} here"
    need = download_bytes(catalog, tier, present)
    if facts.disk_free_bytes is not None and need + DISK_MARGIN_BYTES > facts.disk_free_bytes:
        return f"needs {human(need)} of disk for its download, {human(facts.disk_free_bytes)} free"
    return None


def _warnings(facts: MachineFacts) -> tuple[str, ...]:
    out: list[str] = []
    if facts.llama.kind == "missing":
        out.append("llama-cpp-python is not installed or does not load, so no language model "
                   "can run: pip install llama-cpp-python")
    elif facts.gpu is not None and not facts.llama.gpu_offload:
        out.append(f"the installed llama-cpp-python {facts.llama.version} is a CPU-only build, "
                   f"so the {gpu_label(facts)} is not used; {CUDA_FIX}")
    elif (facts.system.startswith("Darwin") and "arm64" in facts.system
          and not facts.llama.gpu_offload):
        out.append(f"the installed llama-cpp-python {facts.llama.version} is a CPU-only build, "
                   f"so the Apple GPU is not used; {METAL_FIX}")
    if facts.ram_bytes is None:
        out.append("the amount of RAM could not be read; recommending small models")
    return tuple(out)


def first_word(seconds: float) -> str:
    return f"about {seconds:g} s to the first word"


def choose(catalog: Catalog, facts: MachineFacts, present: Collection[str] = ()) -> Recommendation:
    """The best tier this machine meets (the embedded fallback when it meets none)."""
    if not catalog.tiers:
        raise ValueError("the model manifest lists no tiers")
    passed: list[tuple[str, str]] = []
    for tier in catalog.tiers.values():
        problem = why_not(catalog, tier, facts, present)
        if problem is not None:
            passed.append((tier.name, problem))
            continue
        label = machine_label(facts, on_gpu=tier.placement != "cpu")
        reason = f"{label}: {tier.title}, {first_word(tier.first_word_s)}"
        disk = [why for _, why in passed if "of disk" in why]
        if disk:
            reason += f" (a bigger model {disk[0]})"
        return Recommendation(tier, reason, download_bytes(catalog, tier, present),
                              _warnings(facts), tuple(passed))
    raise ValueError("the model manifest's last tier is not the embedded fallback")
