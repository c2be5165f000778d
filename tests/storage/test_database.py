"""The conversation database: schema and migrations, WAL, kill -9, corruption, full disk."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.storage import database, faults
from app.storage.database import SCHEMA_VERSION, open_database, schema_version
from app.storage.history import Database, DiskFull, Exchange, HistoryStore
from app.storage.keeper import Keeper
from app.storage.memory import MemoryStore


def test_a_new_database_has_the_current_schema_in_wal_mode(tmp_path: Path) -> None:
    opened = open_database(tmp_path / "hanasu.db")
    assert opened.path == tmp_path / "hanasu.db" and opened.notice == ""
    db = sqlite3.connect(opened.path)
    assert schema_version(db) == SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"conversations", "exchanges", "current_conversation", "memories",
            "schema_version"} <= tables


def test_a_version_1_database_is_migrated_and_keeps_its_conversations(tmp_path: Path) -> None:
    path = tmp_path / "hanasu.db"
    db = database.connect(path)
    database.migrate(db, target=1)
    assert schema_version(db) == 1
    db.execute("INSERT INTO conversations VALUES ('c1', 'hana', 1.0, 2.0)")
    db.execute("INSERT INTO exchanges(conversation_id, user_text, heard_text, committed_at)"
               " VALUES ('c1', 'Hi', 'Hello!', 2.0)")
    db.close()
    opened = open_database(path)
    assert opened.notice == ""
    store = Database(opened.path)
    assert HistoryStore(store).exchanges("c1")[0].heard_text == "Hello!"
    memories = MemoryStore(store)
    assert memories.add("hana", "my sister is called Mei") is not None
    with store.read() as conn:
        assert schema_version(conn) == SCHEMA_VERSION


def test_a_corrupt_database_is_moved_aside_and_a_clean_one_started(tmp_path: Path) -> None:
    path = tmp_path / "hanasu.db"
    path.write_bytes(b"this is not a database at all" * 200)
    opened = open_database(path)
    assert opened.path == path
    assert "damaged" in opened.notice and "moved to hanasu.db.corrupt-" in opened.notice
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("hanasu.db.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not")
    assert schema_version(sqlite3.connect(path)) == SCHEMA_VERSION


def test_a_database_with_damaged_pages_fails_the_check(tmp_path: Path) -> None:
    path = tmp_path / "hanasu.db"
    opened = open_database(path)
    store = HistoryStore(Database(opened.path))
    for i in range(300):
        store.add_exchange("hana", "c1", Exchange(f"question {i} " * 20, "answer " * 30,
                                                  committed_at=float(i)))
    store.db.close()
    sqlite3.connect(path).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    data = bytearray(path.read_bytes())
    page = 4096
    for offset in range(2 * page, min(len(data), 12 * page), 7):  # scribble on b-tree pages
        data[offset] = 0xFF
    path.write_bytes(bytes(data))
    opened = open_database(path)
    assert "damaged" in opened.notice
    assert HistoryStore(Database(opened.path)).conversations("hana") == []


def test_a_database_from_a_newer_app_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "hanasu.db"
    open_database(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE schema_version SET version = 99")
    db.commit()
    db.close()
    opened = open_database(path)
    assert opened.path is None and "newer Hanasu" in opened.notice
    assert schema_version(sqlite3.connect(path)) == 99


def test_an_oversized_file_is_not_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hanasu.db"
    open_database(path)
    monkeypatch.setattr(database, "MAX_DB_BYTES", 10)
    opened = open_database(path)
    assert "far more than any conversation history" in opened.notice


def test_a_full_disk_gives_one_notice_and_the_conversation_goes_on(tmp_path: Path) -> None:
    notices: list[str] = []
    opened = open_database(tmp_path / "hanasu.db")
    keeper = Keeper(opened, notices.append)
    keeper.history.add_exchange("hana", "c1", Exchange("before", "kept", committed_at=1.0))
    with keeper.db.read() as conn:  # the file may not grow any more: SQLITE_FULL
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
    big = "x" * 100_000
    for _ in range(3):
        with pytest.raises(DiskFull):
            keeper.history.add_exchange("hana", "c1", Exchange(big, big, committed_at=2.0))
    assert len(notices) == 1 and "disk is full" in notices[0]
    for _ in range(2):  # through the writer thread: dropped quietly, no crash
        keeper.submit(lambda: keeper.history.add_exchange(
            "hana", "c1", Exchange(big, big, committed_at=3.0)))
    keeper.flush()
    assert len(notices) == 1
    assert [e.user_text for e in keeper.history.exchanges("c1")] == ["before"]
    keeper.close()


def test_sqlite_full_error_is_recognised() -> None:
    assert faults.is_disk_full(sqlite3.OperationalError("database or disk is full"))
    assert not faults.is_disk_full(sqlite3.OperationalError("database is locked"))


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from app.storage.database import open_database
    from app.storage.history import Database, Exchange, HistoryStore
    store = HistoryStore(Database(open_database(Path(sys.argv[1])).path))
    i = 0
    while True:
        store.add_exchange("hana", "c1", Exchange(f"question {i}", "answer " * 50,
                                                  committed_at=float(i)))
        print(i, flush=True)
        i += 1
""")


def test_kill_9_while_writing_loses_at_most_the_exchange_in_flight(tmp_path: Path) -> None:
    path = tmp_path / "hanasu.db"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=root,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.stdout is not None
    last = -1
    for line in proc.stdout:
        last = int(line)
        if last >= 40:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    opened = open_database(path)
    assert opened.notice == "" and opened.path == path
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    saved = [e.user_text for e in HistoryStore(Database(path)).exchanges("c1")]
    assert saved[: last + 1] == [f"question {i}" for i in range(last + 1)]
    assert len(saved) <= last + 2  # the one being written when killed, at most


@pytest.mark.parametrize("table", ["notes", "conversations"])
def test_a_valid_sqlite_file_of_another_program_is_moved_aside(tmp_path: Path, table: str) -> None:
    path = tmp_path / "hanasu.db"
    other = sqlite3.connect(path)
    other.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, body TEXT)")
    other.execute(f"INSERT INTO {table}(body) VALUES ('theirs')")
    other.commit()
    other.close()
    opened = open_database(path)
    assert opened.path == path
    assert "not a Hanasu database" in opened.notice and table in opened.notice
    [aside] = [p for p in tmp_path.iterdir() if ".foreign-" in p.name]
    assert opened.notice.count(aside.name) == 1
    kept = sqlite3.connect(aside)
    assert kept.execute(f"SELECT body FROM {table}").fetchall() == [("theirs",)]
    kept.close()
    keeper = Keeper(opened)
    keeper.history.add_exchange("hana", "c1", Exchange("saved", "now", committed_at=1.0))
    assert [e.user_text for e in keeper.history.exchanges("c1")] == ["saved"]
    keeper.close()
    assert open_database(path).notice == ""  # ours from now on


@pytest.mark.parametrize("version_table", [
    ("CREATE TABLE schema_version (version INTEGER)", "INSERT INTO schema_version VALUES (2)"),
    ("CREATE TABLE schema_version (version INTEGER)", "INSERT INTO schema_version VALUES (1)"),
    ("CREATE TABLE schema_version (version INTEGER)", "INSERT INTO schema_version VALUES (9)"),
    ("CREATE TABLE schema_version (version TEXT)", "INSERT INTO schema_version VALUES ('x')"),
    ("CREATE TABLE schema_version (id INTEGER, applied TEXT)",
     "INSERT INTO schema_version VALUES (1, 'today')"),
], ids=["current", "older", "newer", "text", "other-columns"])
def test_another_programs_schema_version_table_does_not_make_its_file_ours(
        tmp_path: Path, version_table: tuple[str, str]) -> None:
    """A common table name: without this app's tables the file is still someone else's
    (it was taken for a Hanasu database: nothing saved, or 'made by a newer Hanasu')."""
    path = tmp_path / "hanasu.db"
    other = sqlite3.connect(path)
    for statement in (*version_table, "CREATE TABLE notes (body TEXT)"):
        other.execute(statement)
    other.commit()
    other.close()
    opened = open_database(path)
    assert opened.path == path and "not a Hanasu database" in opened.notice
    assert len([p for p in tmp_path.iterdir() if ".foreign-" in p.name]) == 1
    keeper = Keeper(opened)
    keeper.history.add_exchange("hana", "c1", Exchange("saved", "now", committed_at=1.0))
    assert [e.user_text for e in keeper.history.exchanges("c1")] == ["saved"]
    keeper.close()
    assert open_database(path).notice == ""


def test_an_empty_file_is_a_new_database_not_a_foreign_one(tmp_path: Path) -> None:
    path = tmp_path / "hanasu.db"
    path.write_bytes(b"")
    opened = open_database(path)
    assert opened.path == path and opened.notice == ""
    assert [p.name for p in tmp_path.iterdir()] == ["hanasu.db"]
