"""Re-check files already on disk: size against the manifest, sha256 against a known hash.

Known hashes come from the manifest or, for downloads, from the SHA256SUMS the downloader wrote
after checking the hub's hash, so a later bit flip or a manual copy gone wrong is caught offline.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.models.catalog import ModelEntry
from app.models.errors import ModelError
from app.models.hashing import read_sums, sha256_file
from app.models.paths import package_dir, user_models_dir
from app.models.resolve import entry_root

FileState = Literal["ok", "size-ok", "missing", "incomplete", "wrong-size", "checksum-mismatch"]


@dataclass(frozen=True)
class FileCheck:
    """The verdict on one file; `ok` is True for "ok" and "size-ok" (no hash known)."""

    name: str
    path: Path
    state: FileState
    size: int | None
    expected_size: int | None

    @property
    def ok(self) -> bool:
        return self.state in ("ok", "size-ok")


def entry_location(entry: ModelEntry, base: Path | None = None) -> Path:
    """The folder an entry's files are in: its package, or base (default user models)/dir."""
    if not entry.downloadable:
        root = package_dir(entry.package) if entry.package else None
        if root is None:
            raise ModelError(f"package {entry.package} is not installed")
        return root
    return entry_root(entry, base if base is not None else user_models_dir())


def verify(entry: ModelEntry, *, root: Path | None = None) -> list[FileCheck]:
    """Check every file of `entry` under root (default: where it is installed/downloaded)."""
    root = root if root is not None else entry_location(entry)
    recorded = read_sums(root)
    checks: list[FileCheck] = []
    for file in entry.files:
        path = root / file.name
        expected = file.size
        if not path.is_file():
            checks.append(FileCheck(file.name, path, "missing", None, expected))
            continue
        size = path.stat().st_size
        state: FileState
        if expected is not None and size < expected:
            state = "incomplete"
        elif expected is not None and size != expected:
            state = "wrong-size"
        else:
            known = file.sha256 or recorded.get(Path(file.name).name, "")
            if not known:
                state = "size-ok"
            else:
                digest = sha256_file(path).hexdigest()
                state = "ok" if digest == known else "checksum-mismatch"
        checks.append(FileCheck(file.name, path, state, size, expected))
    return checks
