"""A database that cannot be written is one notice in the window, however many turns are
not saved: a disk really full at launch (the history left as it is), or a database that
turns read-only or is locked past the busy timeout while the window is open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.storage.database import open_database
from app.storage.history import Exchange
from app.storage.keeper import Keeper
from app.ui.main import create_window
from app.ui.window import MainWindow
from tests.support.tmpfs import EXCHANGES, exchange_count, fill, small_tmpfs, write_history


def _save_three(keeper: Keeper) -> None:
    for i in range(3):
        keeper.submit(lambda i=i: keeper.history.add_exchange(  # type: ignore[misc]
            "hana", "c1", Exchange(f"turn {i}", "reply", committed_at=1.0 + i)))
    keeper.flush()


def _window(qtbot: QtBot) -> tuple[MainWindow, Keeper]:
    window = create_window()
    qtbot.addWidget(window)
    assert window.conversations is not None
    keeper = window.conversations.keeper
    assert keeper.db.persistent and keeper.db.path is not None
    return window, keeper


def _saving(window: MainWindow) -> list[str]:
    window.bridge.drain()
    return [m for m in window.notices.messages if "saved" in m]


@pytest.mark.parametrize("fault", ["read-only", "locked"])
def test_a_database_that_refuses_writes_is_one_notice_in_the_window(
        qtbot: QtBot, fault: str) -> None:
    window, keeper = _window(qtbot)
    path = keeper.db.path
    assert isinstance(path, Path)
    other = None
    keeper.flush()  # the window's first writes are done before the connection is swapped
    if fault == "read-only":  # what a read-only file or mount gives (root ignores chmod)
        with keeper.db._lock:  # never under a write on the keeper's thread
            keeper.db._db.close()
            keeper.db._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                                            check_same_thread=False, isolation_level=None)
    else:
        with keeper.db.read() as conn:
            conn.execute("PRAGMA busy_timeout = 20")
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
    _save_three(keeper)
    _save_three(keeper)
    [notice] = _saving(window)
    assert notice.startswith("Nothing is being saved")
    assert ("read-only" if fault == "read-only" else "locked by another program") in notice
    if other is not None:
        other.execute("ROLLBACK")
        other.close()
    window.shutdown()
    keeper.close()


def test_a_disk_full_at_launch_is_one_notice_and_the_history_is_kept(
        qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with small_tmpfs(tmp_path / "disk") as disk:
        db = disk / "data" / "hanasu.db"
        write_history(db)
        monkeypatch.setenv("HANASU_DATA_DIR", str(disk / "data"))
        filler = fill(disk)
        window, keeper = _window_in_memory(qtbot)
        _save_three(keeper)  # the session goes on in memory
        [notice] = _saving(window)
        assert "disk is full" in notice and "untouched" in notice
        window.shutdown()
        keeper.close()
        filler.unlink()
        assert {p.name for p in db.parent.iterdir()} <= {"hanasu.db", "hanasu.db-wal",
                                                         "hanasu.db-shm"}
        assert exchange_count(db) == EXCHANGES


def _window_in_memory(qtbot: QtBot) -> tuple[MainWindow, Keeper]:
    window = create_window()
    qtbot.addWidget(window)
    assert window.conversations is not None
    keeper = window.conversations.keeper
    assert not keeper.db.persistent
    return window, keeper


def test_memory_edits_the_database_refuses_are_said_in_the_dialog_each_time(
        qtbot: QtBot, tmp_path: Path) -> None:
    """Adding, editing or deleting a memory is the user's own request: when the database
    is read-only each one is said in the dialog, no traceback, and the list shows what is
    really kept."""
    from app.ui.memory_dialog import MemoryDialog

    opened = open_database(tmp_path / "hanasu.db")
    keeper = Keeper(opened)
    keeper.memories.add("hana", "My sister is called Mei")
    dialog = MemoryDialog(keeper.memories, "hana", "Hana")
    qtbot.addWidget(dialog)
    dialog.show()
    keeper.db._db.close()
    keeper.db._db = sqlite3.connect(f"file:{opened.path}?mode=ro", uri=True,
                                    check_same_thread=False, isolation_level=None)
    dialog.new_text.setText("I live in Lyon")
    dialog.add_button.click()
    assert "not saved" in dialog.status.text() and "read-only" in dialog.status.text()
    assert dialog.texts() == ["My sister is called Mei"]
    assert dialog.new_text.text() == "I live in Lyon"  # kept to try again
    dialog.status.clear()
    dialog.list.item(0).setText("My sister is called Ana")  # an edit in place
    assert "not saved" in dialog.status.text()
    assert dialog.texts() == ["My sister is called Mei"]
    dialog.status.clear()
    dialog.delete_selected()
    assert "not deleted" in dialog.status.text()
    assert dialog.texts() == ["My sister is called Mei"]
    keeper.close()
