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
    """16 GB, 8 threads, an NVIDIA card the CPU-only llama-cpp-python cannot use."""

    def __init__(self, gpu: Gpu | None = None, llama: LlamaBuild | None = None) -> None:
        self._gpu = gpu
        self._llama = llama or LlamaBuild("0.3.36", "CPU", False)

    def system(self) -> str:
        return "Simulated"

    def gpu(self) -> Gpu | None:
        return self._gpu

    def llama(self) -> LlamaBuild:
        return self._llama

    def ram_bytes(self) -> int | None:
        return 15 * GIB

    def cores(self) -> int:
        return 8

    def disk_free_bytes(self, path: Path) -> int | None:
        return 100 * GIB


def _report(probe: Laptop | None = None) -> ModelsReport:
    catalog = load_catalog()
    advice = advise(catalog, probe or Laptop())
    states = {f"{r}.{e.variant}": ("missing", "") for r in ROLES for e in catalog.downloadable(r)}
    first: list[ModelEntry | None] = [next(iter(catalog.downloadable(r)), None) for r in ROLES]
    roles = [RoleInfo(r, "embedded · 98 MB", entry, "missing" if entry else "embedded only")
             for r, entry in zip(ROLES, first, strict=True)]
    return ModelsReport(roles, advice.facts.gpu, advice, catalog, states)
