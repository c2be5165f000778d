"""A simulated machine and a Models report for it, shared by the tier and first-run tests."""

from __future__ import annotations

from pathlib import Path

from app.gpu import Gpu
from app.models.catalog import ROLES, ModelEntry, load_catalog
from app.models.machine import LlamaBuild
from app.models.recommend import advise
from app.ui.model_info import ModelsReport, RoleInfo

GIB = 1 << 30


class Laptop:
    """16 GB, 8 threads by default, and an NVIDIA card if given (the default CPU-only
    llama-cpp-python cannot use it)."""

    def __init__(self, gpu: Gpu | None = None, llama: LlamaBuild | None = None,
                 ram: int = 15 * GIB, cores: int = 8) -> None:
        self._gpu = gpu
        self._llama = llama or LlamaBuild("0.3.36", "CPU", False)
        self._ram = ram
        self._cores = cores

    def system(self) -> str:
        return "Simulated"

    def gpu(self) -> Gpu | None:
        return self._gpu

    def llama(self) -> LlamaBuild:
        return self._llama

    def ram_bytes(self) -> int | None:
        return self._ram

    def cores(self) -> int:
        return self._cores

    def disk_free_bytes(self, path: Path) -> int | None:
        return 100 * GIB


def card(name: str, gib: int) -> Gpu:
    """An NVIDIA card with 600 MiB in use by the desktop."""
    return Gpu(name, gib * GIB, gib * GIB - 600 * (1 << 20), 600 * (1 << 20))


CUDA = LlamaBuild("0.3.36", "CUDA", True)
MACHINES = {
    "laptop-16gb": Laptop(),
    "rtx3060-cpu-only-binding": Laptop(card("NVIDIA GeForce RTX 3060", 12), ram=31 * GIB),
    "rtx4090": Laptop(card("NVIDIA GeForce RTX 4090", 24), CUDA, ram=62 * GIB, cores=24),
    "old-laptop-8gb-2-cores": Laptop(ram=7 * GIB + 500 * (1 << 20), cores=2),
}
"""Simulated machines the screenshots are taken on."""


def _report(probe: Laptop | None = None) -> ModelsReport:
    catalog = load_catalog()
    advice = advise(catalog, probe or Laptop())
    states = {f"{r}.{e.variant}": ("missing", "") for r in ROLES for e in catalog.downloadable(r)}
    first: list[ModelEntry | None] = [next(iter(catalog.downloadable(r)), None) for r in ROLES]
    roles = [RoleInfo(r, "embedded · 98 MB", entry, "missing" if entry else "embedded only")
             for r, entry in zip(ROLES, first, strict=True)]
    return ModelsReport(roles, advice.facts.gpu, advice, catalog, states)
