"""A database that cannot be read or written (not a damaged one) is never moved aside.

The faults are real where an unprivileged test can make them: a child process whose file
size limit (RLIMIT_FSIZE, SIGXFSZ ignored) is 0 gets an error for every write, as on a full
disk (SQLite reports it as a disk I/O error; the log handler as EFBIG). SQLite's own "disk
is full" is simulated by patching ``sqlite3.connect`` (for files) in the child.
"""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from app.storage.database import open_database
from app.storage.history import Database, Exchange, HistoryStore

REPO = Path(__file__).resolve().parents[2]

LAUNCH = textwrap.dedent("""
    import sqlite3, sys
    if sys.argv[1] == "sqlite-full":
        real = sqlite3.connect
        def full(target, *args, **kwargs):
            if target == ":memory:":
                return real(target, *args, **kwargs)
            raise sqlite3.OperationalError("database or disk is full")
        sqlite3.connect = full
    from app.logging_setup import configure_logging
    configure_logging()
    from app.cli.run import open_keeper
    keeper = open_keeper()
    print("persistent" if keeper.db.persistent else "in memory")
    keeper.close()
""")


def _no_file_growth() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails (EFBIG) instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def _history(path: Path) -> None:
    store = HistoryStore(Database(open_database(path).path))
    for i in range(40):
        store.add_exchange("hana", "c1", Exchange(f"question {i}", "answer " * 40,
                                                  committed_at=float(i)))
    store.db.close()


def _rows(path: Path) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT COUNT(*) FROM exchanges").fetchone()[0])
    finally:
        db.close()


@pytest.mark.parametrize("fault", ["no-file-growth", "sqlite-full"])
def test_a_full_disk_at_launch_leaves_the_history_alone_with_one_notice(
        tmp_path: Path, fault: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _history(data / "hanasu.db")
    before = sorted(p.name for p in data.iterdir())
    env = {**os.environ, "PYTHONPATH": str(REPO), "HANASU_DATA_DIR": str(data),
           "HANASU_LOG_DIR": str(tmp_path / "log")}
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, fault], cwd=REPO, env=env, capture_output=True,
        text=True, timeout=60, check=False,
        preexec_fn=_no_file_growth if fault == "no-file-growth" else None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "in memory"
    assert sorted(p.name for p in data.iterdir() if p.stat().st_size) == before
    assert not [p for p in data.iterdir() if "corrupt" in p.name]
    assert _rows(data / "hanasu.db") == 40
    lines = done.stderr.splitlines()
    assert "Traceback" not in done.stderr
    notices = [line for line in lines if "not be saved" in line]
    assert len(notices) == 1, done.stderr
    assert "untouched" in notices[0]
    if fault == "sqlite-full":
        assert "disk is full" in notices[0]
    log_lines = [line for line in lines if "log file" in line]
    assert len(log_lines) <= 1 and len(lines) == len(notices) + len(log_lines), done.stderr


def test_an_unreadable_database_is_left_alone(tmp_path: Path) -> None:
    """An I/O or permission error at open is no corruption (simulated: root reads any file)."""
    path = tmp_path / "hanasu.db"
    _history(path)
    real = sqlite3.connect

    def unreadable(target: str, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if "mode=rw" in str(target):
            raise sqlite3.OperationalError("unable to open database file")
        connection: sqlite3.Connection = real(target, *args, **kwargs)
        return connection

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sqlite3, "connect", unreadable)
        opened = open_database(path)
    assert opened.path is None and "cannot be opened" in opened.notice
    assert [p.name for p in tmp_path.iterdir()] == ["hanasu.db"] and _rows(path) == 40


def test_a_damaged_file_that_cannot_be_moved_aside_is_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hanasu.db"
    path.write_bytes(b"not a database" * 500)

    def refuse(self: Path, target: Path) -> Path:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "replace", refuse)
    opened = open_database(path)
    assert opened.path is None and "could not be moved aside" in opened.notice
    assert path.read_bytes().startswith(b"not a database")


def test_an_open_or_io_error_names_what_is_wrong_with_the_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite says "unable to open" or "disk I/O error" for a read-only mount and for a
    full disk alike; the disk itself tells them apart."""
    from app.storage.faults import reason

    path = tmp_path / "hanasu.db"
    real = os.statvfs(tmp_path)
    disk = {"f_flag": os.ST_RDONLY, "f_bavail": real.f_bavail, "f_frsize": real.f_frsize}
    monkeypatch.setattr(os, "statvfs", lambda _folder: type("Disk", (), disk))
    cannot_open = sqlite3.OperationalError("unable to open database file")
    io_error = sqlite3.OperationalError("disk I/O error")
    assert "mounted read-only (remount it read-write)" in reason(cannot_open, path)
    disk.update(f_flag=0, f_bavail=0)
    assert reason(io_error, path) == "the disk is full (free some space)"
    locked = sqlite3.OperationalError("database is locked")
    assert "locked by another program" in reason(locked, path)  # not the disk's doing
    disk.update(f_bavail=real.f_bavail)
    assert "cannot be opened" in reason(cannot_open, path)
    assert "reported an error" in reason(io_error, path)
    assert "cannot be opened" in reason(cannot_open)  # no path: SQLite's word only
