"""sha256 helpers and the SHA256SUMS record kept beside downloaded files.

The record lets `verify` check a download later, offline, even when the manifest has no hash.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

SUMS_FILE = "SHA256SUMS"
_CHUNK = 1 << 20


def sha256_file(path: Path, hasher: hashlib._Hash | None = None) -> hashlib._Hash:
    """Feed a file into `hasher` (a new sha256 when None) and return it."""
    hasher = hasher or hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            hasher.update(chunk)
    return hasher


def read_sums(root: Path) -> dict[str, str]:
    """name -> sha256 recorded in root/SHA256SUMS (empty when absent)."""
    sums: dict[str, str] = {}
    try:
        text = (root / SUMS_FILE).read_text(encoding="utf-8")
    except OSError:
        return sums
    for line in text.splitlines():
        digest, _, name = line.partition("  ")
        if digest and name:
            sums[name] = digest.strip().lower()
    return sums


def record_sum(root: Path, name: str, digest: str) -> None:
    """Add or replace one line of root/SHA256SUMS, atomically."""
    sums = read_sums(root)
    sums[name] = digest
    tmp = root / (SUMS_FILE + ".tmp")
    tmp.write_text("".join(f"{d}  {n}\n" for n, d in sorted(sums.items())), encoding="utf-8")
    os.replace(tmp, root / SUMS_FILE)
