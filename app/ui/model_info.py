"""What the model manager shows, gathered off the GUI thread (file checks, machine probe).

GPU memory comes from app.gpu, the app's one GPU probe (``nvidia-smi`` when present); the
recommended tier from app.models.recommend.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from app.gpu import Gpu
from app.models.catalog import ROLES, TIER_ROLES, Catalog, ModelEntry, Role, Tier, load_catalog
from app.models.errors import ModelError
from app.models.recommend import MachineAdvice, advise
from app.models.resolve import resolve
from app.models.status import entry_status
from app.models.units import human

log = logging.getLogger(__name__)

GIB = 1 << 30
LLM_OVERHEAD_BYTES = 1_500_000_000
"""KV cache and compute buffers on top of the weights, for a few-thousand-token context."""


@dataclass(frozen=True)
class RoleInfo:
    role: Role
    used: str
    """What the app loads now, e.g. "embedded · 75 MB"."""
    production: ModelEntry | None
    state: str
    """present / missing / incomplete / broken (of the production entry)."""
    detail: str = ""
    placement: str | None = None
    """Where the tier shown runs its language model ("gpu", "experts-cpu", "cpu")."""


@dataclass(frozen=True)
class ModelsReport:
    roles: list[RoleInfo]
    """Per role: what is used now, and its production model."""
    gpu: Gpu | None
    advice: MachineAdvice | None = None
    catalog: Catalog | None = None
    states: dict[str, tuple[str, str]] = field(default_factory=dict)
    """"role.variant" -> (state, detail) for every downloadable model."""

    def roles_for(self, tier: Tier) -> list[RoleInfo]:
        """The rows for one tier: each role's model in that tier, and its state."""
        if self.catalog is None:
            return self.roles
        used = {info.role: info.used for info in self.roles}
        rows: list[RoleInfo] = []
        for role in ROLES:
            variant = getattr(tier, role) if role in TIER_ROLES else "embedded"
            entry = self.catalog.roles[role][variant]
            if not entry.downloadable:
                rows.append(RoleInfo(role, used.get(role, ""), None, "embedded only"))
                continue
            state, detail = self.states.get(f"{role}.{variant}", ("missing", ""))
            rows.append(RoleInfo(role, used.get(role, ""), entry, state, detail,
                                 tier.placement if role == "llm" else None))
        return rows


def fits_gpu(entry: ModelEntry, gpu: Gpu | None, placement: str | None = None) -> str:
    """A sentence on whether the LLM fits in GPU memory (memory in GiB, called GB as
    drivers and the tier reasons count it), or that its tier runs it on the CPU."""
    if placement == "cpu":
        return "This tier runs the language model on the CPU (no GPU memory needed)."
    if gpu is None:
        return "No GPU detected: the language model runs on the CPU (slower replies)."
    need = entry.expected_size + LLM_OVERHEAD_BYTES
    verdict = "Fits" if need <= gpu.memory_bytes else "Does not fit"
    return (f"{verdict} in {gpu.name} ({gpu.memory_bytes / GIB:.0f} GB; needs about "
            f"{need / GIB:.0f} GB)")


def gather(_report: object = None) -> ModelsReport:
    catalog = load_catalog()
    states: dict[str, tuple[str, str]] = {}
    for role in ROLES:
        for entry in catalog.downloadable(role):
            st = entry_status(entry)
            states[f"{role}.{entry.variant}"] = (st.state, st.detail)
    try:
        advice: MachineAdvice | None = advise(catalog)
    except ValueError as exc:  # a manifest without tiers: show the models without advice
        log.warning("no tier recommendation: %s", exc)
        advice = None
    roles: list[RoleInfo] = []
    for role in ROLES:
        try:
            used_model = resolve(role, catalog=catalog)
            used = f"{used_model.source} · {human(used_model.size_bytes)}"
        except ModelError as exc:
            used = f"error: {exc}"
        entries = catalog.downloadable(role)
        if not entries:
            roles.append(RoleInfo(role, used, None, "embedded only"))
            continue
        state, detail = states[f"{role}.{entries[0].variant}"]
        roles.append(RoleInfo(role, used, entries[0], state, detail))
    gpu = advice.facts.gpu if advice is not None else None
    return ModelsReport(roles, gpu, advice, catalog, states)
