"""The one SQLite database of conversations and memories (``hanasu.db`` in the user data dir).

Opening is careful because this file holds what the user said over months:

* a size check first (a file far bigger than any conversation history is not ours);
* ``PRAGMA quick_check`` (the B-tree and page checks of ``integrity_check`` without the
  slow index cross-check), so a damaged file is found at launch, not mid-conversation;
* a damaged file is moved aside to ``hanasu.db.corrupt-<timestamp>`` (with its
  ``-wal``/``-shm``), never deleted, and a clean database is started in its place; the
  caller gets the one-line message to show. Only damage does that: a file that cannot be
  read or written for another reason (a full disk, an I/O error, a read-only mount,
  permissions, a lock) is left untouched and the session runs in memory;
* a valid SQLite file with other tables and no schema version (not ours) is moved aside
  the same way, as ``hanasu.db.foreign-<timestamp>``;
* a schema newer than this build is left untouched and the session runs in memory;
* WAL journal with ``synchronous=FULL``: each committed exchange is on disk when its
  transaction returns, so ``kill -9`` (or a power cut) loses at most the turn in flight.

Schema versions live in ``schema_version``; ``_MIGRATIONS[n]`` takes a version-``n``
database to ``n + 1`` inside one transaction.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.paths import user_data_dir
from app.storage.faults import is_corruption, reason
from app.storage.private import create_private_file, private_dir, private_file

log = logging.getLogger(__name__)

DB_FILE = "hanasu.db"
SCHEMA_VERSION = 3
MAX_DB_BYTES = 2 * 1024**3
"""Years of daily conversation are tens of MB; a file over 2 GiB is not ours to open."""
BUSY_TIMEOUT_S = 5.0


class DatabaseError(RuntimeError):
    """The database cannot be used; ``str(error)`` is one line fit for the UI."""


def _v1(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE conversations ("
        " id TEXT PRIMARY KEY,"
        " persona_id TEXT NOT NULL,"
        " started_at REAL NOT NULL,"
        " updated_at REAL NOT NULL)"
    )
    db.execute("CREATE INDEX conversations_persona ON conversations(persona_id, updated_at)")
    db.execute(
        "CREATE TABLE exchanges ("
        " id INTEGER PRIMARY KEY,"
        " conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
        " user_text TEXT NOT NULL,"
        " heard_text TEXT NOT NULL,"
        " interrupted INTEGER NOT NULL DEFAULT 0,"
        " committed_at REAL NOT NULL,"
        " timings TEXT NOT NULL DEFAULT '{}')"
    )
    db.execute("CREATE INDEX exchanges_conversation ON exchanges(conversation_id, id)")
    db.execute(
        "CREATE TABLE current_conversation ("
        " persona_id TEXT PRIMARY KEY,"
        " conversation_id TEXT NOT NULL)"
    )


def _v2(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE memories ("
        " id INTEGER PRIMARY KEY,"
        " persona_id TEXT NOT NULL,"
        " text TEXT NOT NULL,"
        " created_at REAL NOT NULL,"
        " updated_at REAL NOT NULL)"
    )
    db.execute("CREATE INDEX memories_persona ON memories(persona_id, updated_at)")
    if fts5_available(db):
        db.execute(
            "CREATE VIRTUAL TABLE memories_fts USING fts5("
            " text, content='memories', content_rowid='id', tokenize='porter unicode61')"
        )
        db.execute(
            "CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN"
            " INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text); END"
        )
        db.execute(
            "CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN"
            " INSERT INTO memories_fts(memories_fts, rowid, text)"
            " VALUES ('delete', old.id, old.text); END"
        )
        db.execute(
            "CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN"
            " INSERT INTO memories_fts(memories_fts, rowid, text)"
            " VALUES ('delete', old.id, old.text);"
            " INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text); END"
        )


def _v3(db: sqlite3.Connection) -> None:
    """Timers and reminders (rung or cancelled ones stay, marked), and the user's notes."""
    db.execute(
        "CREATE TABLE reminders ("
        " id INTEGER PRIMARY KEY,"
        " kind TEXT NOT NULL CHECK (kind IN ('timer', 'reminder')),"
        " label TEXT NOT NULL,"
        " due_at REAL NOT NULL,"
        " created_at REAL NOT NULL,"
        " duration_s REAL,"
        " language TEXT NOT NULL DEFAULT 'en',"
        " state TEXT NOT NULL DEFAULT 'pending'"
        "  CHECK (state IN ('pending', 'fired', 'cancelled')),"
        " changed_at REAL)"
    )
    db.execute("CREATE INDEX reminders_due ON reminders(state, due_at)")
    db.execute(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL,"
        " created_at REAL NOT NULL)"
    )
    if fts5_available(db):
        db.execute(
            "CREATE VIRTUAL TABLE notes_fts USING fts5("
            " text, content='notes', content_rowid='id', tokenize='porter unicode61')"
        )
        db.execute(
            "CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN"
            " INSERT INTO notes_fts(rowid, text) VALUES (new.id, new.text); END"
        )
        db.execute(
            "CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN"
            " INSERT INTO notes_fts(notes_fts, rowid, text)"
            " VALUES ('delete', old.id, old.text); END"
        )


_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {0: _v1, 1: _v2, 2: _v3}
"""``_MIGRATIONS[n]`` takes a version-``n`` database to version ``n + 1``."""
_TABLES = {1: ("conversations", "exchanges", "current_conversation"), 2: ("memories",),
           3: ("reminders", "notes")}
"""The tables each version adds: a file without them is not a Hanasu database."""


def fts5_available(db: sqlite3.Connection) -> bool:
    """Whether this SQLite build has FTS5 (Python's usually does; some distro builds not)."""
    try:
        db.execute("CREATE VIRTUAL TABLE temp._fts5_probe USING fts5(x)")
        db.execute("DROP TABLE temp._fts5_probe")
    except sqlite3.OperationalError:
        return False
    return True


def has_fts(db: sqlite3.Connection, table: str = "memories") -> bool:
    """Whether ``table`` has its FTS5 index (``<table>_fts``)."""
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (f"{table}_fts",)
    ).fetchone()
    return row is not None


@dataclass(frozen=True)
class Opened:
    """Where the database is and what the user should be told about opening it."""

    path: Path | None
    """None: this session keeps everything in memory (nothing was or will be written)."""
    notice: str = ""


def default_path() -> Path:
    return user_data_dir() / DB_FILE


def connect(path: Path | None) -> sqlite3.Connection:
    """A connection with this app's settings (``path`` None: a private in-memory database).

    ``check_same_thread`` is off because a connection is handed from the thread that opens
    it to the one thread that uses it; callers never share one between threads at once."""
    target = str(path) if path is not None else ":memory:"
    db = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, check_same_thread=False,
                         isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    if path is not None:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
    return db


def schema_version(db: sqlite3.Connection) -> int:
    exists = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not exists:
        return 0
    row = db.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def migrate(db: sqlite3.Connection, target: int = SCHEMA_VERSION) -> None:
    """Bring ``db`` up to ``target``, one transaction per step."""
    version = schema_version(db)
    while version < target:
        db.execute("BEGIN IMMEDIATE")
        try:
            _MIGRATIONS[version](db)
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            db.execute("DELETE FROM schema_version")
            db.execute("INSERT INTO schema_version(version) VALUES (?)", (version + 1,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        version += 1
        log.info("conversation database migrated to schema %d", version)


def open_database(path: Path | None = None) -> Opened:
    """Check, repair and migrate the database at ``path`` (default: the user data dir).

    Never raises for a bad file: a corrupt one is moved aside and a fresh one made. A
    file that cannot be read or written for any other reason (a full disk, an I/O error,
    a read-only mount, permissions, a lock) is left untouched and the session runs in
    memory. The returned notice, when not empty, is the one line to show the user; it is
    only logged at INFO here, so the console shows it once."""
    path = path or default_path()
    try:
        private_dir(path.parent)
    except OSError as exc:
        return Opened(None, f"Conversations will not be saved: cannot create {path.parent} "
                            f"({exc.strerror or exc}).")
    notice = ""
    verdict = _check(path)
    if verdict.kind == "newer":
        return Opened(None, "The conversation database was made by a newer Hanasu; "
                            "this session's conversation will not be saved.")
    if verdict.kind == "unusable":
        log.info("conversation database %s left untouched: %s", path, verdict.detail)
        return Opened(None, f"Conversations will not be saved this session: {verdict.detail}. "
                            f"The saved ones in {path} are untouched; restart Hanasu once "
                            "this is fixed.")
    if verdict.kind in ("corrupt", "foreign"):
        what = (f"The conversation database was damaged ({verdict.detail})"
                if verdict.kind == "corrupt" else
                f"{path.name} is not a Hanasu database (it holds other tables: "
                f"{verdict.detail})")
        try:
            aside = _move_aside(path, verdict.kind)
        except OSError as exc:
            return Opened(None, f"{what}, and it could not be moved aside "
                                f"({exc.strerror or exc}); conversations will not be saved "
                                "this session.")
        notice = f"{what}; it was moved to {aside.name} and a new one was started."
        log.info("%s", notice)
    try:
        _make_private(path)
        db = connect(path)
        try:
            migrate(db)
        finally:
            db.close()
    except (sqlite3.Error, OSError) as exc:
        log.info("cannot create the conversation database %s: %s", path, exc)
        return Opened(None, "Conversations will not be saved this session: "
                            f"{reason(exc, path)}.")
    return Opened(path, notice)


@dataclass(frozen=True)
class _Verdict:
    kind: str = "ok"
    """"ok", "newer" or "unusable" (left alone), "corrupt" or "foreign" (moved aside)."""
    detail: str = ""


def _check(path: Path) -> _Verdict:
    """What opening ``path`` found (an absent file is "ok": it is created)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return _Verdict()
    except OSError as exc:
        return _Verdict("unusable", f"{path.name} cannot be read ({exc.strerror or exc})")
    if size > MAX_DB_BYTES:
        return _Verdict("corrupt", f"{size // 1024**2} MB, far more than any conversation "
                                   "history")
    try:
        db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_S)
        try:
            rows = db.execute("PRAGMA quick_check").fetchall()
            if [tuple(r) for r in rows] != [("ok",)]:
                return _Verdict("corrupt", f"check failed: {rows[0][0]}")
            version = _our_version(db)
            if version is None:
                return _Verdict("foreign", ", ".join(_tables(db)[:3]))
            if version > SCHEMA_VERSION:
                return _Verdict("newer")
        finally:
            db.close()
    except sqlite3.Error as exc:
        if is_corruption(exc):
            return _Verdict("corrupt", str(exc))
        return _Verdict("unusable", reason(exc, path))
    return _Verdict()


def _make_private(path: Path) -> None:
    """The database 0600 before SQLite opens it (its ``-wal`` and ``-shm`` take the
    database's mode), and any that an earlier version left readable by everyone."""
    create_private_file(path)
    for suffix in ("-wal", "-shm"):
        private_file(path.with_name(path.name + suffix))


def _our_version(db: sqlite3.Connection) -> int | None:
    """The schema version of a Hanasu database (0: no tables yet), or None for another
    program's file: its own tables, or a ``schema_version`` table that is not ours (another
    column, a version whose tables are missing)."""
    tables = set(_tables(db))
    if not tables:
        return 0
    try:
        version = schema_version(db)
    except (sqlite3.OperationalError, ValueError, TypeError) as exc:
        if isinstance(exc, sqlite3.DatabaseError) and is_corruption(exc):
            raise
        return None
    expected = {name for v, names in _TABLES.items() if v <= version for name in names}
    return version if version > 0 and expected <= tables else None


def _tables(db: sqlite3.Connection) -> list[str]:
    """The file's own tables (not SQLite's internal ones)."""
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                      " AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
    return [str(r[0]) for r in rows]


def _move_aside(path: Path, kind: str = "corrupt") -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.{kind}-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.{kind}-{stamp}-{n}")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            target = aside.with_name(aside.name + suffix)
            source.replace(target)
            private_file(target)
    return aside
