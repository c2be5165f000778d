"""``hanasu run`` on a disk that is really full, and on one really mounted read-only.

The data and log folders live on a small tmpfs (mounting one needs root, as the suite runs
here; elsewhere these two tests skip and the simulated faults of test_database_faults and
test_save_failures cover the same paths). The history made before must come through
untouched, the user gets one line that says what is wrong and what to do, the log says
once that it cannot be written, and the run exits 1 after writing its reply.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile

from tests.pipeline.conftest import silence, voiced
from tests.support.tmpfs import (
    EXCHANGES,
    exchange_count,
    fill,
    remount,
    small_tmpfs,
    write_history,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "disk") as where:
        yield where


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
    write_history(db)
    (disk / "log").mkdir(mode=0o700)
    filler = fill(disk)
    done = _run(tmp_path, disk)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    saving, logging = _said(done.stderr)
    assert len(saving) == 1 and "disk is full" in saving[0] and "untouched" in saving[0]
    assert len(logging) == 1  # then quiet
    filler.unlink()  # space again: the history is all there, nothing was set aside
    assert {p.name for p in db.parent.iterdir()} <= {"hanasu.db", "hanasu.db-wal",
                                                     "hanasu.db-shm"}  # none set aside
    assert exchange_count(db) == EXCHANGES


def test_a_disk_mounted_read_only_keeps_the_history_and_says_so_once(
        tmp_path: Path, disk: Path) -> None:
    db = disk / "data" / "hanasu.db"
    write_history(db)
    (disk / "log").mkdir(mode=0o700)
    remount(disk, "ro")
    done = _run(tmp_path, disk)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    saving, logging = _said(done.stderr)
    assert len(saving) == 1 and "mounted read-only" in saving[0], done.stderr
    assert "untouched" in saving[0]
    assert len(logging) == 1
    assert [p.name for p in db.parent.iterdir()] == ["hanasu.db"]
    remount(disk, "rw")
    assert exchange_count(db) == EXCHANGES
