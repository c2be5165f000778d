"""Re-check files on disk by hashing them: a right-sized file of zeros is not a model.

The expected hash of a downloadable file is the manifest's sha256. Files of embedded models
ship in pip packages, whose RECORD lists a sha256 for every installed file; that is their
expected hash. A file with no known expected hash is reported ``unverified``, never ``ok``.
"""

from __future__ import annotations

import base64
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.models.catalog import ModelEntry
from app.models.errors import ModelError
from app.models.hashing import read_sums, record_stamp, sha256_file
from app.models.paths import package_dir, user_models_dir
from app.models.resolve import entry_root

FileState = Literal["ok", "missing", "wrong-size", "hash-mismatch", "unverified"]

VerifyProgress = Callable[[str, int, int], None]
"""(file name, bytes hashed so far, file size)."""


@dataclass(frozen=True)
class FileCheck:
    """The verdict on one file; only "ok" is ok."""

    name: str
    path: Path
    state: FileState
    size: int | None
    expected_size: int | None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.state == "ok"


def entry_location(entry: ModelEntry, base: Path | None = None) -> Path:
    """The folder an entry's files are in: its package, or base (default user models)/dir."""
    if not entry.downloadable:
        root = package_dir(entry.package) if entry.package else None
        if root is None:
            raise ModelError(f"package {entry.package} is not installed")
        return root
    return entry_root(entry, base if base is not None else user_models_dir())


def package_hashes(package: str) -> dict[str, str]:
    """path inside the package -> sha256 (hex), from the installing distribution's RECORD."""
    hashes: dict[str, str] = {}
    try:
        dist_names = importlib.metadata.packages_distributions().get(package, [])
    except Exception:  # broken metadata somewhere in site-packages: no hashes, not a crash
        return hashes
    prefix = package + "/"
    for dist_name in dist_names:
        try:
            files = importlib.metadata.distribution(dist_name).files or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for record in files:
            posix = record.as_posix()
            if record.hash is None or record.hash.mode != "sha256" or not posix.startswith(prefix):
                continue
            value = record.hash.value
            try:
                digest = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
            except ValueError:
                continue
            hashes[posix[len(prefix):]] = digest
    return hashes


def expected_hashes(entry: ModelEntry, root: Path) -> dict[str, str]:
    """file name -> the sha256 it must have ("" when nothing trustworthy is known)."""
    if entry.downloadable:
        # SHA256SUMS is written only after the downloader compared the file with a trusted
        # hash (the manifest's, or the hub's LFS sha256), so it may stand in for a missing
        # manifest hash; the manifest always wins.
        recorded = read_sums(root)
        return {f.name: f.sha256 or recorded.get(Path(f.name).name, "") for f in entry.files}
    record = package_hashes(entry.package) if entry.package else {}
    return {f.name: record.get(f.name, "") for f in entry.files}


def verify(
    entry: ModelEntry, *, root: Path | None = None, progress: VerifyProgress | None = None
) -> list[FileCheck]:
    """Hash every file of `entry` under root (default: where it is installed/downloaded)."""
    root = root if root is not None else entry_location(entry)
    expected = expected_hashes(entry, root)
    checks: list[FileCheck] = []
    for file in entry.files:
        path = root / file.name
        want_size = file.size
        if not path.is_file():
            checks.append(FileCheck(file.name, path, "missing", None, want_size))
            continue
        size = path.stat().st_size
        if want_size is not None and size != want_size:
            detail = f"{size} bytes, expected {want_size}"
            checks.append(FileCheck(file.name, path, "wrong-size", size, want_size, detail))
            continue
        report = None
        if progress is not None:
            def report(done: int, total: int, name: str = file.name) -> None:
                progress(name, done, total)
        digest = sha256_file(path, progress=report).hexdigest()
        want = expected[file.name]
        state: FileState
        if not want:
            state = "unverified"
            detail = f"sha256 {digest}; no trusted hash to compare it with"
        elif digest == want:
            state, detail = "ok", ""
            if entry.downloadable:
                record_stamp(root, file.name, digest)
        else:
            state = "hash-mismatch"
            detail = f"sha256 {digest[:12]}…, expected {want[:12]}…"
        checks.append(FileCheck(file.name, path, state, size, want_size, detail))
    return checks
