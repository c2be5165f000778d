"""A database that stops taking writes (read-only, locked, failing) is said once, not per turn.

The suite runs as root, whom ``chmod 0444`` does not stop, so the read-only database is an
SQLite read-only connection (``mode=ro``) to a healthy file: the same SQLITE_READONLY a
read-only mount or a file without write permission gives.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.storage.database import open_database
from app.storage.history import Exchange, SaveFailed
from app.storage.keeper import Keeper
from tests.pipeline.conftest import silence, voiced

REPO = Path(__file__).resolve().parents[2]


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False,
                           isolation_level=None)


def _keeper(tmp_path: Path, notices: list[str]) -> tuple[Keeper, Path]:
    opened = open_database(tmp_path / "hanasu.db")
    assert opened.path is not None
    keeper = Keeper(opened, notices.append)
    keeper.history.add_exchange("hana", "c1", Exchange("kept", "yes", committed_at=1.0))
    return keeper, opened.path


def _save_three(keeper: Keeper) -> None:
    for i in range(3):
        keeper.submit(lambda i=i: keeper.history.add_exchange(  # type: ignore[misc]
            "hana", "c1", Exchange(f"turn {i}", "reply", committed_at=2.0 + i)))
    keeper.flush()


def test_a_read_only_database_is_said_once_and_nothing_raises_per_turn(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    notices: list[str] = []
    keeper, path = _keeper(tmp_path, notices)
    keeper.db._db.close()
    keeper.db._db = _read_only(path)
    with caplog.at_level(logging.WARNING):
        _save_three(keeper)
    assert len(notices) == 1 and "read-only" in notices[0], notices
    assert "Nothing is being saved" in notices[0]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [e.user_text for e in keeper.history.exchanges("c1")] == ["kept"]

    keeper.delete_conversation("hana", "c1")  # the user's own request: said every time
    keeper.delete_conversation("hana", "c1")
    assert notices[1:] == ["The conversation was not deleted: the conversation database "
                           "cannot be written right now."] * 2
    assert keeper.forget_everything("hana").conversation_id == "c1"  # nothing forgotten
    assert [e.user_text for e in keeper.history.exchanges("c1")] == ["kept"]
    keeper.close()


def test_a_database_locked_past_the_busy_timeout_is_said_once_and_saving_resumes(
        tmp_path: Path) -> None:
    notices: list[str] = []
    keeper, path = _keeper(tmp_path, notices)
    with keeper.db.read() as conn:
        conn.execute("PRAGMA busy_timeout = 20")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    _save_three(keeper)
    assert len(notices) == 1 and "locked by another program" in notices[0], notices
    other.execute("ROLLBACK")
    other.close()
    _save_three(keeper)  # the lock is gone: saved again, and a later failure is said again
    assert len(keeper.history.exchanges("c1")) == 4
    with pytest.raises(SaveFailed):
        keeper.db._db.close()
        keeper.db._db = _read_only(path)
        keeper.history.add_exchange("hana", "c1", Exchange("x", "y"))
    assert len(notices) == 2
    keeper.close()


RUN_READ_ONLY = textwrap.dedent("""
    import sqlite3, sys
    from app.storage import history
    def read_only(path):
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False,
                               isolation_level=None)
    history.connect = read_only
    from app.__main__ import main
    sys.exit(main(sys.argv[1:]))
""")


def test_hanasu_run_with_a_read_only_database_says_so_once_and_writes_the_reply(
        tmp_path: Path) -> None:
    """The reply audio is written, one line says nothing was saved and why, and the exit
    status is 1: the run did not keep the conversation it was asked to keep."""
    data = tmp_path / "data"
    open_database(data / "hanasu.db")  # a healthy database that becomes read-only
    wav, out = tmp_path / "q.wav", tmp_path / "out.wav"
    turns = [np.concatenate([voiced(1.0), silence(1.2)]) for _ in range(3)]
    soundfile.write(wav, np.concatenate([silence(0.5), *turns]), 16_000)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HANASU_DATA_DIR": str(data),
           "HANASU_CONFIG_DIR": str(tmp_path / "config"), "HANASU_LOG_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", RUN_READ_ONLY, "run", "--fake-engines", "--input", str(wav),
         "--output", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Nothing is being saved" in lines[0], done.stderr
    assert "read-only" in lines[0]
    assert soundfile.info(out).frames > 0
