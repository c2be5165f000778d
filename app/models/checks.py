"""Cheap sanity checks on model files, run before loading them.

Loading a truncated 17 GB GGUF fails deep inside llama.cpp with an unhelpful message (or worse,
crashes); a header read and a size comparison catch the usual cases (cut download, wrong file,
empty file) in microseconds and give the user one line that says what to do.
"""

from __future__ import annotations

import logging
from pathlib import Path

from app.models.catalog import PRODUCTION, ModelEntry, Role
from app.models.errors import ModelError
from app.models.hashing import read_sums, record_stamp, sha256_file, stamp_matches

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
WHISPER_REQUIRED = ("model.bin", "config.json")

ROLE_LABELS: dict[str, str] = {"llm": "LLM", "asr": "ASR", "tts": "TTS", "vad": "VAD"}


def label(role: str) -> str:
    """How a role is named in messages."""
    return ROLE_LABELS.get(role, role)


def download_hint(role: str, variant: str = PRODUCTION) -> str:
    """The command that repairs a missing or broken downloaded model."""
    suffix = "" if variant == PRODUCTION else f" --variant {variant}"
    return f"run `hanasu models download {role}{suffix}`"


def check_file(
    path: Path, role: Role, expected_size: int | None = None, hint: str | None = None
) -> int:
    """Raise ModelError if `path` is missing, empty, truncated or not the right format."""
    what = label(role)
    if not path.exists():
        raise ModelError(f"{what} model not found: {path}")
    if not path.is_file():
        raise ModelError(f"{what} model is not a file: {path}")
    size = path.stat().st_size
    tail = f" — {hint}" if hint else ""
    if size == 0:
        raise ModelError(f"{what} model file is empty: {path}{tail}")
    if expected_size is not None and size != expected_size:
        if size < expected_size:
            raise ModelError(
                f"{what} model {path} is incomplete ({size} of {expected_size} bytes){tail}"
            )
        raise ModelError(
            f"{what} model {path} has the wrong size ({size} bytes, expected {expected_size}){tail}"
        )
    if path.suffix.lower() == ".gguf":
        with path.open("rb") as fh:
            if fh.read(4) != GGUF_MAGIC:
                raise ModelError(f"{what} model {path} is not a GGUF file (bad header){tail}")
    return size


def check_whisper_dir(path: Path, role: Role = "asr") -> int:
    """A CTranslate2 Whisper folder needs at least model.bin and config.json."""
    what = label(role)
    if not path.is_dir():
        raise ModelError(f"{what} model folder not found: {path}")
    missing = [name for name in WHISPER_REQUIRED if not (path / name).is_file()]
    if missing:
        raise ModelError(f"{what} model folder {path} is missing {', '.join(missing)}")
    total = 0
    for name in WHISPER_REQUIRED:
        total += check_file(path / name, role)
    return total + sum(
        p.stat().st_size for p in path.iterdir() if p.is_file() and p.name not in WHISPER_REQUIRED
    )


def check_explicit(path: Path, role: Role) -> int:
    """Validate a path the user chose; return its size in bytes (folder: sum of its files)."""
    path = path.expanduser()
    if not path.exists():
        raise ModelError(f"{label(role)} model not found: {path}")
    if path.is_dir():
        if role != "asr":
            raise ModelError(f"{label(role)} model must be a file, not a folder: {path}")
        return check_whisper_dir(path, role)
    return check_file(path, role)


def check_entry(entry: ModelEntry, root: Path) -> int:
    """Validate every file of an entry under `root`; sizes are enforced for downloaded entries."""
    hint = download_hint(entry.role, entry.variant) if entry.downloadable else None
    total = 0
    for file in entry.files:
        expected = file.size if entry.downloadable else None
        total += check_file(root / file.name, entry.role, expected, hint)
    main = root / entry.main
    if entry.role == "asr" and main.is_dir():
        check_whisper_dir(main, entry.role)
    elif not main.exists():
        raise ModelError(f"{label(entry.role)} model not found: {main}")
    return total


def check_hashes(entry: ModelEntry, root: Path) -> None:
    """Hash each file of a downloaded entry once before its first use.

    A file already stamped as verified (same size and mtime since) is trusted without
    hashing, so only the first start after a manual copy pays for it; the downloader stamps
    what it fetched. A mismatch is a ModelError that says what to run.
    """
    if not entry.downloadable:
        return
    recorded = read_sums(root)
    for file in entry.files:
        expected = file.sha256 or recorded.get(Path(file.name).name, "")
        path = root / file.name
        if not expected:
            log.warning("%s has no known sha256; it cannot be verified", path)
            continue
        if stamp_matches(root, file.name, expected):
            continue
        log.info("checking the sha256 of %s before its first use", path)
        digest = sha256_file(path).hexdigest()
        if digest != expected:
            raise ModelError(
                f"{label(entry.role)} model file {path} is damaged or not the right file "
                f"(sha256 {digest[:12]}…, expected {expected[:12]}…) — "
                f"{download_hint(entry.role, entry.variant)}"
            )
        record_stamp(root, file.name, digest)
