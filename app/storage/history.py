"""Saved conversations: each persona's exchanges, which conversation is current, exports.

A conversation id is a random hex string made when the conversation starts, so "New
conversation" needs no disk write on the GUI thread: the row appears with its first
exchange. ``current_conversation`` points each persona at the conversation it resumes.

All access goes through one connection guarded by a lock: the writer thread writes, the
GUI and controller threads read (small indexed queries, a millisecond or two).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from app.storage.database import connect
from app.storage.faults import is_disk_full, is_save_fault, reason

log = logging.getLogger(__name__)

Timings = dict[str, float | int | bool | None]


def new_conversation_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Exchange:
    """One committed turn: what the user said and what they heard of the reply."""

    user_text: str
    heard_text: str
    interrupted: bool = False
    committed_at: float = 0.0
    timings: Timings = field(default_factory=dict)


@dataclass(frozen=True)
class ConversationInfo:
    id: str
    persona_id: str
    started_at: float
    updated_at: float
    exchange_count: int
    preview: str
    """The first thing the user said (the list's title)."""


class Database:
    """One connection and its lock; ``write`` reports a failing save once through ``notify``."""

    def __init__(self, path: Path | None, notify: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._db = connect(path)
        if path is None:  # in memory: same schema, nothing reaches the disk
            from app.storage.database import migrate

            migrate(self._db)
        self._lock = threading.Lock()
        self._notify = notify or (lambda _message: None)
        self._failing = False
        self.dropped_writes = 0
        """Writes the disk refused since opening (each one rolled back)."""

    @property
    def persistent(self) -> bool:
        return self.path is not None

    @property
    def kept_everything(self) -> bool:
        """Every write reached the disk: the database is a file and none was dropped."""
        return self.persistent and self.dropped_writes == 0

    @property
    def failing(self) -> bool:
        """The last write failed (and the user was told)."""
        return self._failing

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._db

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction. When the disk refuses it (full, read-only, locked past the busy
        timeout, an I/O error) it is rolled back, one line says why and what to do (once
        until a write succeeds again) and ``SaveFailed`` is raised for the caller to drop."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as exc:
                if self._db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK")
                if not is_save_fault(exc):
                    raise
                log.info("a save failed: %s", exc)
                self.dropped_writes += 1
                reported = self._failing
                if not reported:
                    self._failing = True
                    self._notify(f"Nothing is being saved: {reason(exc, self.path)}. "
                                 "This conversation goes on.")
                error = DiskFull if is_disk_full(exc) else SaveFailed
                raise error(str(exc), reported) from exc
            self._failing = False

    def close(self) -> None:
        with self._lock:
            self._db.close()


class SaveFailed(RuntimeError):
    """A write was dropped because the disk refused it; the user has been told."""

    def __init__(self, message: str, reported_before: bool = False) -> None:
        super().__init__(message)
        self.reported_before = reported_before
        """The notice went out for an earlier failure (this one was not said again)."""


class DiskFull(SaveFailed):
    """A write was dropped because the disk is full (already reported to the user)."""


class HistoryStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # ---- writes (writer thread) --------------------------------------------------------

    def add_exchange(self, persona_id: str, conversation_id: str, exchange: Exchange) -> None:
        with self.db.write() as db:
            db.execute(
                "INSERT INTO conversations(id, persona_id, started_at, updated_at)"
                " VALUES (?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at",
                (conversation_id, persona_id, exchange.committed_at, exchange.committed_at),
            )
            db.execute(
                "INSERT INTO exchanges(conversation_id, user_text, heard_text, interrupted,"
                " committed_at, timings) VALUES (?, ?, ?, ?, ?, ?)",
                (conversation_id, exchange.user_text, exchange.heard_text,
                 int(exchange.interrupted), exchange.committed_at,
                 json.dumps(exchange.timings)),
            )

    def set_current(self, persona_id: str, conversation_id: str) -> None:
        with self.db.write() as db:
            db.execute(
                "INSERT INTO current_conversation(persona_id, conversation_id) VALUES (?, ?)"
                " ON CONFLICT(persona_id) DO UPDATE SET conversation_id = excluded.conversation_id",
                (persona_id, conversation_id),
            )

    def delete_conversation(self, conversation_id: str) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def forget_persona(self, persona_id: str) -> None:
        """Every conversation and memory of ``persona_id``, in one transaction."""
        with self.db.write() as db:
            db.execute("DELETE FROM conversations WHERE persona_id = ?", (persona_id,))
            db.execute("DELETE FROM current_conversation WHERE persona_id = ?", (persona_id,))
            db.execute("DELETE FROM memories WHERE persona_id = ?", (persona_id,))

    # ---- reads ---------------------------------------------------------------------------

    def current_id(self, persona_id: str) -> str | None:
        with self.db.read() as db:
            row = db.execute(
                "SELECT conversation_id FROM current_conversation WHERE persona_id = ?",
                (persona_id,),
            ).fetchone()
            if row is None:  # never chosen: the persona's latest conversation, if any
                row = db.execute(
                    "SELECT id FROM conversations WHERE persona_id = ?"
                    " ORDER BY updated_at DESC LIMIT 1", (persona_id,),
                ).fetchone()
        return str(row[0]) if row else None

    def exchanges(self, conversation_id: str, last: int | None = None) -> list[Exchange]:
        """The conversation's exchanges in order (only the ``last`` ones if given)."""
        limit = -1 if last is None else last
        with self.db.read() as db:
            rows = db.execute(
                "SELECT user_text, heard_text, interrupted, committed_at, timings FROM ("
                " SELECT * FROM exchanges WHERE conversation_id = ? ORDER BY id DESC LIMIT ?)"
                " ORDER BY id", (conversation_id, limit),
            ).fetchall()
        return [Exchange(u, h, bool(i), float(t), _timings(j)) for u, h, i, t, j in rows]

    def conversations(self, persona_id: str | None, search: str = "") -> list[ConversationInfo]:
        """The persona's conversations (every persona's when None, a deleted one's too),
        most recent first; ``search``: only those where either side said it (SQLite's LIKE:
        Latin letters in any case)."""
        where: list[str] = []
        args: list[str] = []
        if persona_id is not None:
            where.append("c.persona_id = ?")
            args.append(persona_id)
        if search.strip():
            pattern = "%" + _like_escaped(search.strip()) + "%"
            where.append("EXISTS (SELECT 1 FROM exchanges s WHERE s.conversation_id = c.id AND"
                         " (s.user_text LIKE ? ESCAPE '\\' OR s.heard_text LIKE ? ESCAPE '\\'))")
            args += [pattern, pattern]
        condition = f" WHERE {' AND '.join(where)}" if where else ""
        with self.db.read() as db:
            rows = db.execute(
                "SELECT c.id, c.persona_id, c.started_at, c.updated_at, COUNT(e.id),"
                " (SELECT user_text FROM exchanges WHERE conversation_id = c.id"
                "  ORDER BY id LIMIT 1)"
                " FROM conversations c LEFT JOIN exchanges e ON e.conversation_id = c.id"
                f"{condition} GROUP BY c.id ORDER BY c.updated_at DESC", args,
            ).fetchall()
        return [ConversationInfo(str(i), str(p), float(s), float(u), int(n), str(f or ""))
                for i, p, s, u, n, f in rows]

    def conversation(self, conversation_id: str) -> ConversationInfo | None:
        with self.db.read() as db:
            row = db.execute("SELECT persona_id FROM conversations WHERE id = ?",
                             (conversation_id,)).fetchone()
        if row is None:
            return None
        return next((c for c in self.conversations(str(row[0])) if c.id == conversation_id),
                    None)


def _like_escaped(text: str) -> str:
    """``text`` matched literally by LIKE ... ESCAPE '\\' (its % and _ are not wildcards)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _timings(text: str) -> Timings:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, int | float | bool) or v is None}


def export_markdown(info: ConversationInfo, exchanges: list[Exchange], persona_name: str) -> str:
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.started_at))
    lines = [f"# Conversation with {persona_name}", "", f"Started {started}.", ""]
    for exchange in exchanges:
        lines += [f"**You:** {exchange.user_text}", ""]
        reply = exchange.heard_text + (" *(interrupted)*" if exchange.interrupted else "")
        lines += [f"**{persona_name}:** {reply}", ""]
    return "\n".join(lines)


def export_json(info: ConversationInfo, exchanges: list[Exchange], persona_name: str) -> str:
    return json.dumps({
        "format": "hanasu-conversation",
        "version": 1,
        "id": info.id,
        "persona_id": info.persona_id,
        "persona_name": persona_name,
        "started_at": info.started_at,
        "updated_at": info.updated_at,
        "exchanges": [
            {"user": e.user_text, "heard": e.heard_text, "interrupted": e.interrupted,
             "committed_at": e.committed_at, "timings": e.timings}
            for e in exchanges
        ],
    }, indent=2, ensure_ascii=False)
