"""Measure this machine and recommend its tier: the I/O around the pure choice in tiers.py.

Slow (nvidia-smi, loading llama.cpp, looking at the disk): call it off the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.models.catalog import Catalog, load_catalog
from app.models.machine import MachineFacts, MachineProbe, SystemProbe, measure
from app.models.resolve import search_dirs
from app.models.status import entry_status
from app.models.tiers import Recommendation, choose


@dataclass(frozen=True)
class MachineAdvice:
    """The measured machine, and the tier recommended for it."""

    facts: MachineFacts
    recommendation: Recommendation
    present: frozenset[str] = frozenset()
    """"role.variant" of the downloadable models already on disk."""


def present_models(catalog: Catalog) -> set[str]:
    """"role.variant" of every downloadable model complete on disk."""
    return {f"{entry.role}.{entry.variant}"
            for role in catalog.roles for entry in catalog.downloadable(role)
            if entry_status(entry).state == "present"}


def advise(catalog: Catalog | None = None, probe: MachineProbe | None = None) -> MachineAdvice:
    """Measure the machine (`probe`, default the real one) and choose its tier."""
    catalog = catalog or load_catalog()
    facts = measure(probe or SystemProbe(), search_dirs()[-1][1])
    present = frozenset(present_models(catalog))
    return MachineAdvice(facts, choose(catalog, facts, present), present)
