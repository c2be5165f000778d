"""sha256 helpers, the SHA256SUMS record and the "already verified" stamps beside model files.

SHA256SUMS (the usual ``digest  name`` lines) records what the downloader checked, for
people and tools. ``.hanasu-verified`` holds one stamp per file (digest, size, mtime): a
file whose stamp still matches its size and mtime, and whose digest is the expected one,
was hashed before and need not be hashed again at every start. Both files are read with a
size cap and parsed line by line (no recursion), like every other file the app reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.storage.safe_read import UserFileError, read_text

log = logging.getLogger(__name__)

SUMS_FILE = "SHA256SUMS"
STAMPS_FILE = ".hanasu-verified"
MAX_RECORD_BYTES = 256 * 1024
_CHUNK = 1 << 20
_HEX = frozenset("0123456789abcdef")

HashProgress = Callable[[int, int], None]
"""(bytes hashed so far, file size)."""


def sha256_file(
    path: Path, hasher: hashlib._Hash | None = None, progress: HashProgress | None = None
) -> hashlib._Hash:
    """Feed a file into `hasher` (a new sha256 when None) and return it."""
    hasher = hasher or hashlib.sha256()
    total = path.stat().st_size if progress is not None else 0
    done = 0
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            hasher.update(chunk)
            if progress is not None:
                done += len(chunk)
                progress(done, total)
    return hasher


def is_sha256(value: str) -> bool:
    return len(value) == 64 and set(value) <= _HEX


def _lines(path: Path) -> list[str]:
    try:
        return read_text(path, max_bytes=MAX_RECORD_BYTES).splitlines()
    except UserFileError as exc:
        if path.exists():
            log.warning("ignoring %s: %s", path, exc)
        return []


def read_sums(root: Path) -> dict[str, str]:
    """name -> sha256 recorded in root/SHA256SUMS (empty when absent or unusable)."""
    sums: dict[str, str] = {}
    for line in _lines(root / SUMS_FILE):
        digest, _, name = line.partition("  ")
        digest = digest.strip().lower()
        if is_sha256(digest) and name:
            sums[name] = digest
    return sums


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def record_sum(root: Path, name: str, digest: str) -> None:
    """Add or replace one line of root/SHA256SUMS, atomically."""
    sums = read_sums(root)
    sums[name] = digest
    _write_atomically(root / SUMS_FILE, "".join(f"{d}  {n}\n" for n, d in sorted(sums.items())))


@dataclass(frozen=True)
class Stamp:
    """A file's digest as of its (size, mtime) when it was hashed."""

    digest: str
    size: int
    mtime_ns: int


def read_stamps(root: Path) -> dict[str, Stamp]:
    """name -> Stamp from root/.hanasu-verified (lines: ``digest size mtime_ns name``)."""
    stamps: dict[str, Stamp] = {}
    for line in _lines(root / STAMPS_FILE):
        parts = line.split(" ", 3)
        if len(parts) != 4 or not is_sha256(parts[0]):
            continue
        try:
            stamps[parts[3]] = Stamp(parts[0], int(parts[1]), int(parts[2]))
        except ValueError:
            continue
    return stamps


def stamp_matches(root: Path, name: str, expected: str) -> bool:
    """True if `name` was hashed to `expected` and has not changed since."""
    stamp = read_stamps(root).get(name)
    if stamp is None or stamp.digest != expected:
        return False
    try:
        info = (root / name).stat()
    except OSError:
        return False
    return (info.st_size, info.st_mtime_ns) == (stamp.size, stamp.mtime_ns)


def record_stamp(root: Path, name: str, digest: str) -> None:
    """Remember that `name` (as it is now) hashes to `digest`; best effort (read-only
    folders just mean hashing again next time)."""
    try:
        info = (root / name).stat()
        stamps = read_stamps(root)
        stamps[name] = Stamp(digest, info.st_size, info.st_mtime_ns)
        text = "".join(f"{s.digest} {s.size} {s.mtime_ns} {n}\n" for n, s in sorted(stamps.items()))
        _write_atomically(root / STAMPS_FILE, text)
    except OSError as exc:
        log.info("could not record the verified hash of %s: %s", root / name, exc)
        with contextlib.suppress(OSError):
            (root / (STAMPS_FILE + ".tmp")).unlink()
