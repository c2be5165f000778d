"""A small tmpfs for real full-disk and read-only-mount tests (mounting needs root; where
it cannot be mounted the test skips, and the simulated faults cover the same paths)."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.storage.database import open_database
from app.storage.history import Database, Exchange, HistoryStore

EXCHANGES = 40


@contextmanager
def small_tmpfs(where: Path, size: str = "1m") -> Iterator[Path]:
    """``where`` with a tmpfs of ``size`` mounted on it, unmounted afterwards."""
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                              str(where)], capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs ({mounted.stderr.strip()}): needs root")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def remount(where: Path, mode: str) -> None:
    """Remount the tmpfs at ``where`` ``ro`` or ``rw``."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], check=True)


def write_history(path: Path) -> None:
    """A healthy database at ``path`` holding EXCHANGES exchanges."""
    store = HistoryStore(Database(open_database(path).path))
    for i in range(EXCHANGES):
        store.add_exchange("hana", "c1", Exchange(f"question {i}", "answer " * 20,
                                                  committed_at=float(i)))
    store.db.close()


def fill(disk: Path) -> Path:
    """Fill ``disk`` up with one file (returned: delete it to free the space)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def exchange_count(path: Path) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT COUNT(*) FROM exchanges").fetchone()[0])
    finally:
        db.close()
