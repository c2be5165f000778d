"""Pick the model file each role uses now.

Order: an explicit path from settings/CLI, then downloaded production models (repo models/ folder,
then the user's data folder), then the small embedded models that ship in PyPI packages, so the
app always starts, and gets better as soon as the big models are present.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.models.catalog import EMBEDDED, Catalog, ModelEntry, Role, load_catalog
from app.models.checks import check_entry, check_explicit, check_hashes, download_hint, label
from app.models.errors import ModelError
from app.models.paths import package_dir, repo_models_dir, user_models_dir

log = logging.getLogger(__name__)

SourceKind = Literal["explicit", "models-dir", "user-data", "embedded"]
Prefer = Literal["production", "embedded"]


@dataclass(frozen=True)
class ResolvedModel:
    """The model a role will load: what `path` points at and where it was found."""

    role: Role
    path: Path
    source: SourceKind
    entry: ModelEntry | None
    size_bytes: int


def entry_root(entry: ModelEntry, base: Path) -> Path:
    """The folder holding a downloadable entry's files under a models folder."""
    return base / (entry.dir or entry.variant)


def is_present(entry: ModelEntry, base: Path) -> bool:
    """True if any file of the entry exists there (then it must be complete, or it is an error)."""
    root = entry_root(entry, base)
    return any((root / f.name).exists() for f in entry.files)


def search_dirs(
    models_dir: Path | None = None, data_dir: Path | None = None
) -> list[tuple[SourceKind, Path]]:
    """The folders searched for downloaded models, in priority order."""
    dirs: list[tuple[SourceKind, Path]] = []
    repo_dir = models_dir if models_dir is not None else repo_models_dir()
    if repo_dir is not None:
        dirs.append(("models-dir", repo_dir))
    dirs.append(("user-data", data_dir if data_dir is not None else user_models_dir()))
    return dirs


def resolve_embedded(entry: ModelEntry) -> ResolvedModel:
    """Find an embedded model inside its installed package, without importing the package."""
    root = package_dir(entry.package) if entry.package else None
    if root is None:
        dist = (entry.package or "?").replace("_", "-")
        raise ModelError(
            f"embedded {label(entry.role)} model is not installed: "
            f"package {entry.package} is missing (pip install {dist})"
        )
    size = check_entry(entry, root)
    return ResolvedModel(entry.role, root / entry.main, "embedded", entry, size)


def resolve(
    role: Role,
    *,
    explicit: Path | None = None,
    prefer: Prefer | None = None,
    catalog: Catalog | None = None,
    models_dir: Path | None = None,
    data_dir: Path | None = None,
    verify_hashes: bool = True,
    variant: str | None = None,
) -> ResolvedModel:
    """Return the model `role` should load, or raise ModelError with a one-line reason.

    prefer="production" refuses the embedded fallback; prefer="embedded" skips downloaded models.
    `models_dir` / `data_dir` override the searched folders (tests, settings). A downloaded
    model is hashed before its first use (``verify_hashes``; listings turn it off).
    `variant` (the user's chosen tier's model for this role) is tried first when present;
    "embedded" means the embedded model even when bigger ones are downloaded.
    """
    if explicit is not None:
        path = explicit.expanduser()
        return ResolvedModel(role, path, "explicit", None, check_explicit(path, role))
    catalog = catalog or load_catalog()
    if variant == EMBEDDED and prefer is None:
        prefer = "embedded"
    if prefer != "embedded":
        dirs = search_dirs(models_dir, data_dir)
        entries = catalog.downloadable(role)
        # the chosen variant in any folder first, then every variant, folder by folder
        order = [(kind, base, e) for e in entries if e.variant == variant for kind, base in dirs]
        order += [(kind, base, e) for kind, base in dirs for e in entries]
        for kind, base, entry in order:
            if is_present(entry, base):
                root = entry_root(entry, base)
                size = check_entry(entry, root)
                if verify_hashes:
                    check_hashes(entry, root)
                log.info("%s model: %s (%s)", role, root / entry.main, kind)
                return ResolvedModel(role, root / entry.main, kind, entry, size)
        if prefer == "production":
            if not catalog.downloadable(role):
                raise ModelError(f"there is no production {label(role)} model to download")
            raise ModelError(f"no production {label(role)} model found — {download_hint(role)}")
    resolved = resolve_embedded(catalog.entry(role, EMBEDDED))
    log.info("%s model: %s (embedded)", role, resolved.path)
    return resolved
