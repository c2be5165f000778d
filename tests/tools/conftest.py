"""A fixed moment in a fixed zone, and real stores on an in-memory database."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from app.storage.history import Database
from app.storage.notes import NoteStore
from app.storage.reminders import ReminderStore
from app.tools.builtin import builtin_registry
from app.tools.spec import ToolRegistry

TOKYO = timezone(timedelta(hours=9), "JST")
NOW = datetime(2024, 3, 12, 15, 5, tzinfo=TOKYO)
"""A Tuesday afternoon, 15:05 in Tokyo."""


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, at: datetime = NOW) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db() -> Database:
    return Database(None)


@pytest.fixture
def reminders(db: Database) -> ReminderStore:
    return ReminderStore(db)


@pytest.fixture
def notes(db: Database) -> NoteStore:
    return NoteStore(db)


@pytest.fixture
def registry(reminders: ReminderStore, notes: NoteStore, clock: Clock) -> ToolRegistry:
    return builtin_registry(reminders, notes, clock)
