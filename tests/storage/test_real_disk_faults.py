"""``hanasu run`` on a disk that is really full, and on one really mounted read-only.

The data and log folders live on a small tmpfs (mounting one needs root, as the suite runs
here; elsewhere these two tests skip and the simulated faults of test_database_faults and
test_save_failures cover the same paths). The history made before must come through
untouched, the user gets one line that says what is wrong and what to do, the log says
once that it cannot be written, and the run exits 1 after writing its reply.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.storage.database import open_database
from app.storage.history import Database, Exchange, HistoryStore
from tests.pipeline.conftest import silence, voiced

REPO = Path(__file__).resolve().parents[2]
EXCHANGES = 40


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs, unmounted afterwards."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs",
                              str(where)], capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs ({mounted.stderr.strip()}): needs root")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _history(path: Path) -> None:
    store = HistoryStore(Database(open_database(path).path))
    for i in range(EXCHANGES):
        store.add_exchange("hana", "c1", Exchange(f"question {i}", "answer " * 20,
                                                  committed_at=float(i)))
    store.db.close()


def _fill(disk: Path) -> Path:
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


def _rows(path: Path) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT COUNT(*) FROM exchanges").fetchone()[0])
    finally:
        db.close()


def _run(tmp_path: Path, disk: Path) -> subprocess.CompletedProcess[str]:
    wav, out = tmp_path / "q.wav", tmp_path / "out.wav"
    soundfile.write(wav, np.concatenate([silence(0.5), voiced(1.0), silence(1.2)]), 16_000)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HANASU_DATA_DIR": str(disk / "data"),
           "HANASU_LOG_DIR": str(disk / "log"), "HANASU_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run(
        [sys.executable, "-m", "app", "run", "--fake-engines", "--input", str(wav),
         "--output", str(out)], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=120, check=False)
    assert soundfile.info(out).frames > 0, done.stderr  # the reply is written all the same
    return done


def _said(stderr: str) -> tuple[list[str], list[str]]:
    """(the lines about saving, the lines about the log file); nothing else is allowed."""
    lines = stderr.splitlines()
    saving = [line for line in lines if "saved" in line]
    logging = [line for line in lines if "log file" in line]
    assert len(lines) == len(saving) + len(logging), stderr
    return saving, logging


def test_a_really_full_disk_keeps_the_history_and_says_so_once(
        tmp_path: Path, disk: Path) -> None:
    db = disk / "data" / "hanasu.db"
    _history(db)
    (disk / "log").mkdir(mode=0o700)
    filler = _fill(disk)
    done = _run(tmp_path, disk)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    saving, logging = _said(done.stderr)
    assert len(saving) == 1 and "disk is full" in saving[0] and "untouched" in saving[0]
    assert len(logging) == 1  # then quiet
    filler.unlink()  # space again: the history is all there, nothing was set aside
    assert {p.name for p in db.parent.iterdir()} <= {"hanasu.db", "hanasu.db-wal",
                                                     "hanasu.db-shm"}  # none set aside
    assert _rows(db) == EXCHANGES


def test_a_disk_mounted_read_only_keeps_the_history_and_says_so_once(
        tmp_path: Path, disk: Path) -> None:
    db = disk / "data" / "hanasu.db"
    _history(db)
    (disk / "log").mkdir(mode=0o700)
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    done = _run(tmp_path, disk)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    saving, logging = _said(done.stderr)
    assert len(saving) == 1 and "mounted read-only" in saving[0], done.stderr
    assert "untouched" in saving[0]
    assert len(logging) == 1
    assert [p.name for p in db.parent.iterdir()] == ["hanasu.db"]
    subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
    assert _rows(db) == EXCHANGES
