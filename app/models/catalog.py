"""The model manifest (models/manifest.toml) as typed objects.

The manifest is data, not code, so the list of known models can change without touching the
resolver or the downloader; pydantic rejects a malformed manifest with a precise message.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.models.errors import ModelError
from app.paths import frozen_bundle_dir, repo_root
from app.storage.safe_read import MIB, UserFileError, load_toml

log = logging.getLogger(__name__)

Role = Literal["llm", "asr", "tts", "vad"]
ROLES: tuple[Role, ...] = get_args(Role)
Source = Literal["hf", "url", "package"]

PRODUCTION = "production"
EMBEDDED = "embedded"

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
MAX_MANIFEST_BYTES = 1 * MIB
MAX_MANIFEST_DEPTH = 8


class ModelFile(BaseModel):
    """One file of a model, relative to the entry's folder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    size: int | None = Field(default=None, ge=0)
    sha256: str = ""
    url: str | None = None  # overrides base_url/name for `url` entries

    @field_validator("sha256")
    @classmethod
    def _hex_or_empty(cls, value: str) -> str:
        value = value.strip().lower()
        if value and not _SHA256.match(value):
            raise ValueError("sha256 must be 64 hex digits or empty")
        return value


class ModelEntry(BaseModel):
    """One variant of one role: where it comes from, which files it has, what the app loads."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    variant: str
    title: str
    source: Source
    repo: str | None = None
    revision: str = "main"
    base_url: str | None = None
    package: str | None = None
    dir: str | None = None
    main: str
    licence: str = ""
    files: tuple[ModelFile, ...] = Field(min_length=1)
    approx_size_gb: float | None = Field(default=None, gt=0)
    """What to expect when the files' sizes are not pinned (the hub tells the real ones)."""
    multilingual: bool = True
    """False for English-only speech models (Whisper *.en)."""

    @model_validator(mode="after")
    def _source_fields(self) -> ModelEntry:
        needed = {"hf": ("repo", "dir"), "url": ("dir",), "package": ("package",)}[self.source]
        missing = [name for name in needed if not getattr(self, name)]
        if missing:
            raise ValueError(f"{self.source} entry needs {', '.join(missing)}")
        if self.source == "url" and not self.base_url and any(f.url is None for f in self.files):
            raise ValueError("url entry needs base_url or a url per file")
        if self.source == "url":
            # a plain URL has no other source of truth: without these, any bytes of the
            # right length (all zeros, say) would be accepted as the model
            for file in self.files:
                if file.size is None or not file.sha256:
                    raise ValueError(f"url entry file {file.name} needs a size and a sha256")
        return self

    @property
    def downloadable(self) -> bool:
        """True for entries fetched from the network (hf or url)."""
        return self.source != "package"

    @property
    def total_size(self) -> int | None:
        """Sum of the manifest sizes, or None when some size is unknown."""
        sizes = [f.size for f in self.files]
        return None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)

    @property
    def expected_size(self) -> int:
        """The download size to plan for: the pinned sizes, else the manifest's estimate."""
        total = self.total_size
        if total is not None:
            return total
        return max(self.known_size, int((self.approx_size_gb or 0.0) * 1e9))

    @property
    def known_size(self) -> int:
        """Sum of the sizes the manifest knows (a lower bound when some are missing)."""
        return sum(f.size or 0 for f in self.files)

    def file_url(self, file: ModelFile, endpoint: str | None = None) -> str:
        """Where to download one file of a downloadable entry."""
        if file.url:
            return file.url
        if self.source == "url" and self.base_url:
            return self.base_url.rstrip("/") + "/" + file.name
        if self.source == "hf" and self.repo:
            from huggingface_hub import hf_hub_url

            return str(hf_hub_url(self.repo, file.name, revision=self.revision, endpoint=endpoint))
        raise ModelError(f"{self.role} model {self.variant!r} is not downloadable")


Placement = Literal["gpu", "experts-cpu", "cpu"]
TIER_ROLES: tuple[Role, ...] = ("llm", "asr", "tts")


class Tier(BaseModel):
    """One kind of machine and the models it runs best (the `[tiers.NAME]` tables).

    The `min_*` fields are what the machine needs; `first_word_s` is the reply time to
    expect (an estimate until `hanasu bench` has measured it on such a machine).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    title: str
    llm: str
    asr: str
    tts: str
    placement: Placement
    min_vram_gb: float = Field(default=0.0, ge=0)
    min_ram_gb: float = Field(default=0.0, ge=0)
    min_cores: int = Field(default=1, ge=1)
    first_word_s: float = Field(gt=0)


class Catalog(BaseModel):
    """All entries, by role and then by variant, in manifest order; then the tiers, best
    first."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 1
    roles: dict[Role, dict[str, ModelEntry]]
    tiers: dict[str, Tier] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _every_role_embedded(self) -> Catalog:
        for role in ROLES:
            if EMBEDDED not in self.roles.get(role, {}):
                raise ValueError(f"role {role!r} has no embedded entry")
        return self

    @model_validator(mode="after")
    def _tiers_name_known_models(self) -> Catalog:
        for tier in self.tiers.values():
            for role in TIER_ROLES:
                variant = getattr(tier, role)
                if variant not in self.roles.get(role, {}):
                    raise ValueError(f"tier {tier.name!r}: no {role} model {variant!r}")
            asr = self.roles["asr"][tier.asr]
            # Japanese and Mandarin personas need a multilingual recognizer in every tier;
            # the embedded tiny.en is the exception the app handles (it switches those
            # personas to the embedded multilingual base, app/models/multilingual_whisper.py).
            if not asr.multilingual and asr.downloadable:
                raise ValueError(f"tier {tier.name!r}: {asr.title} is English-only")
        if self.tiers and list(self.tiers.values())[-1].llm != EMBEDDED:
            raise ValueError("the last tier must be the embedded fallback")
        return self

    def tier_entries(self, tier: Tier) -> list[ModelEntry]:
        """The llm, asr and tts entries a tier uses."""
        return [self.roles[role][getattr(tier, role)] for role in TIER_ROLES]

    def entry(self, role: Role, variant: str = PRODUCTION) -> ModelEntry:
        """One entry; ModelError names the known variants when it is absent."""
        variants = self.roles.get(role, {})
        if variant not in variants:
            known = ", ".join(variants) or "none"
            raise ModelError(f"no {role} model variant {variant!r} (known: {known})")
        return variants[variant]

    def downloadable(self, role: Role) -> list[ModelEntry]:
        """Entries of a role fetched from the network, production first."""
        return [e for e in self.roles.get(role, {}).values() if e.downloadable]


def default_manifest_path() -> Path:
    """The built-in copy of the manifest, used when the app runs installed."""
    return Path(__file__).with_name("default_manifest.toml")


def manifest_candidates() -> list[Path]:
    """Where the manifest may be, first match wins: checkout, frozen bundle, built-in copy."""
    paths = [repo_root() / "models" / "manifest.toml"]
    bundle = frozen_bundle_dir()
    if bundle is not None:
        paths.append(bundle / "models" / "manifest.toml")
    paths.append(default_manifest_path())
    return paths


def parse_catalog(data: dict[str, Any]) -> Catalog:
    """Build a Catalog from the manifest's TOML tables."""
    roles: dict[str, dict[str, Any]] = {}
    schema_version = data.get("schema_version", 1)
    tiers = data.get("tiers", {})
    if not isinstance(tiers, dict) or not all(isinstance(t, dict) for t in tiers.values()):
        raise ModelError("model manifest: [tiers] must be a table of tables")
    for role, variants in data.items():
        if role in ("schema_version", "tiers"):
            continue
        if not isinstance(variants, dict):
            raise ModelError(f"model manifest: [{role}] must be a table of variants")
        for name, fields in variants.items():
            if not isinstance(fields, dict):
                raise ModelError(f"model manifest: [{role}.{name}] must be a table")
        roles[role] = {
            name: {**fields, "role": role, "variant": name} for name, fields in variants.items()
        }
    try:
        return Catalog.model_validate({
            "schema_version": schema_version,
            "roles": roles,
            "tiers": {name: {**fields, "name": name} for name, fields in tiers.items()},
        })
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ModelError(f"model manifest is invalid at {where}: {first['msg']}") from exc


def load_catalog(path: Path | None = None) -> Catalog:
    """Load the manifest from `path`, or from the first place it is found."""
    if path is None:
        path = next((p for p in manifest_candidates() if p.is_file()), default_manifest_path())
    log.debug("loading model manifest %s", path)
    if not path.exists():
        raise ModelError(f"model manifest not found: {path}")
    try:
        data = load_toml(path, max_bytes=MAX_MANIFEST_BYTES, max_depth=MAX_MANIFEST_DEPTH)
    except UserFileError as exc:
        raise ModelError(f"model manifest {path} cannot be used: {exc}") from exc
    return parse_catalog(data)
