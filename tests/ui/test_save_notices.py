"""A database that stops taking writes while the window is open (read-only, locked past
the busy timeout) is one notice in the window, however many turns are not saved."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.storage.history import Exchange
from app.storage.keeper import Keeper
from app.ui.main import create_window
from app.ui.window import MainWindow


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
    if fault == "read-only":  # what a read-only file or mount gives (root ignores chmod)
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
