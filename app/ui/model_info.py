"""What the model manager shows, gathered off the GUI thread (file checks, GPU probe).

GPU memory comes from app.gpu, the app's one GPU probe (``nvidia-smi`` when present).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.gpu import Gpu, first_gpu
from app.models.catalog import ROLES, ModelEntry, Role, load_catalog
from app.models.errors import ModelError
from app.models.resolve import resolve
from app.models.status import entry_status
from app.models.units import human

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


@dataclass(frozen=True)
class ModelsReport:
    roles: list[RoleInfo]
    gpu: Gpu | None


def fits_gpu(entry: ModelEntry, gpu: Gpu | None) -> str:
    """A sentence on whether the production LLM fits in GPU memory."""
    if gpu is None:
        return "No GPU detected: the language model runs on the CPU (slower replies)."
    need = entry.known_size + LLM_OVERHEAD_BYTES
    verdict = "fits" if need <= gpu.memory_bytes else "does not fit"
    return (f"{verdict} in {gpu.name} ({human(gpu.memory_bytes)}; needs about {human(need)})")


def gather(_report: object = None) -> ModelsReport:
    catalog = load_catalog()
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
        status = entry_status(entries[0])
        roles.append(RoleInfo(role, used, entries[0], status.state, status.detail))
    return ModelsReport(roles, first_gpu())
