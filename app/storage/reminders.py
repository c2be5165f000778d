"""Timers and reminders in the app's database, so they survive a restart.

A change the disk refuses (full, read-only, locked) is not lost: it is kept in memory,
so the timer still rings and a cancelled one stays quiet this session, and it is written
with the next change that reaches the disk. The database has already told the user, once,
that nothing is being saved; ``unsaved`` says whether anything is still only in memory.
"""

from __future__ import annotations

import itertools
import sqlite3
import time
from dataclasses import replace
from typing import Any

from app.storage.history import Database, SaveFailed
from app.tools.records import Kind, Reminder, State

_COLUMNS = "id, kind, label, due_at, created_at, duration_s, language, state"


def _row(row: tuple[Any, ...]) -> Reminder:
    i, kind, label, due, created, duration, language, state = row
    return Reminder(int(i), "timer" if kind == "timer" else "reminder", str(label),
                    float(due), float(created), None if duration is None else float(duration),
                    str(language), _state(str(state)))


def _state(text: str) -> State:
    return "fired" if text == "fired" else "cancelled" if text == "cancelled" else "pending"


class ReminderStore:
    """``app.tools.records.ReminderBook`` over the ``reminders`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._memory: dict[int, Reminder] = {}
        """Added while the disk refused; negative ids until written."""
        self._closed: dict[int, State] = {}
        """Fired or cancelled while the disk refused (by the id the caller knows)."""
        self._aliases: dict[int, int] = {}
        """A written in-memory reminder's old (negative) id -> its id on disk."""
        self._next_memory_id = itertools.count(-1, -1)

    @property
    def unsaved(self) -> bool:
        return bool(self._memory or self._closed)

    def add(self, kind: Kind, label: str, due_at: float, *, created_at: float,
            duration_s: float | None = None, language: str = "en") -> Reminder:
        reminder = Reminder(0, kind, " ".join(label.split())[:300], due_at, created_at,
                            duration_s, language)
        self._flush()
        try:
            with self.db.write() as db:
                return replace(reminder, id=self._insert(db, reminder))
        except SaveFailed:
            reminder = replace(reminder, id=next(self._next_memory_id))
            self._memory[reminder.id] = reminder
            return reminder

    def cancel(self, reminder_id: int) -> bool:
        return self._close(reminder_id, "cancelled")

    def mark_fired(self, reminder_id: int) -> None:
        self._close(reminder_id, "fired")

    def pending(self) -> list[Reminder]:
        with self.db.read() as db:
            rows = db.execute(f"SELECT {_COLUMNS} FROM reminders WHERE state = 'pending'"
                              " ORDER BY due_at, id").fetchall()
        found = [_row(r) for r in rows] + list(self._memory.values())
        shut = {self._aliases.get(i, i) for i in self._closed}
        return sorted((r for r in found if r.id not in shut),
                      key=lambda r: (r.due_at, r.id))

    def due(self, now: float) -> list[Reminder]:
        return [r for r in self.pending() if r.due_at <= now]

    def get(self, reminder_id: int) -> Reminder | None:
        reminder_id = self._aliases.get(reminder_id, reminder_id)
        if reminder_id in self._memory:
            return self._memory[reminder_id]
        with self.db.read() as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM reminders WHERE id = ?",
                             (reminder_id,)).fetchone()
        return _row(row) if row else None

    def _close(self, reminder_id: int, state: State) -> bool:
        current = self.get(reminder_id)
        if current is None or current.state != "pending" or reminder_id in self._closed:
            return False
        self._flush()
        target = self._aliases.get(reminder_id, reminder_id)
        if target in self._memory:  # never written: nothing on disk to change
            del self._memory[target]
            return True
        try:
            with self.db.write() as db:
                self._update(db, target, state)
        except SaveFailed:
            self._closed[reminder_id] = state
        return True

    def _flush(self) -> None:
        """Write what the disk refused before, in one transaction, if it takes it now."""
        if not self.unsaved:
            return
        try:
            with self.db.write() as db:
                written = {old: self._insert(db, r) for old, r in self._memory.items()}
                for reminder_id, state in self._closed.items():
                    self._update(db, written.get(reminder_id, reminder_id), state)
        except SaveFailed:
            return
        self._aliases.update(written)
        self._memory.clear()
        self._closed.clear()

    @staticmethod
    def _insert(db: sqlite3.Connection, r: Reminder) -> int:
        cursor = db.execute(
            "INSERT INTO reminders(kind, label, due_at, created_at, duration_s, language)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (r.kind, r.label, r.due_at, r.created_at, r.duration_s, r.language))
        return int(cursor.lastrowid or 0)

    @staticmethod
    def _update(db: sqlite3.Connection, reminder_id: int, state: State) -> None:
        db.execute(
            "UPDATE reminders SET state = ?, changed_at = ? WHERE id = ? AND state = 'pending'",
            (state, time.time(), reminder_id))
