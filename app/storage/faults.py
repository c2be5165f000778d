"""What an SQLite error means for the user's saved conversations.

Only corruption (a file that is not a database, or a damaged one) may move a database
aside. A full disk, an I/O error, a read-only file or mount, missing permissions or a lock
held by another program say nothing about the file: it is left exactly as it is and the
user is told, in one line, what is wrong and what to do.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

# Primary SQLite result codes (the low byte of an extended code).
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT = 3, 5, 6, 8, 10, 11
_FULL, _CANTOPEN, _AUTH, _NOTADB = 13, 14, 23, 26
LOW_SPACE_BYTES = 1024**2
"""Less free space than this when a write fails: the disk is full, whatever SQLite said
(a full disk often reaches it as an I/O error on its shared-memory file)."""
_READ_ONLY = ("the conversation database is read-only (check that its file and folder "
              "are writable and the disk is not mounted read-only)")


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+, set for SQLite's own errors
    return code & 0xFF if isinstance(code, int) else None


def is_corruption(exc: BaseException) -> bool:
    """The file itself is damaged or not a database: the one case for moving it aside."""
    if _code(exc) in (_CORRUPT, _NOTADB):
        return True
    text = str(exc).lower()
    return "file is not a database" in text or "malformed" in text


def is_disk_full(exc: BaseException) -> bool:
    """SQLite's "database or disk is full" (SQLITE_FULL), or the OS's ENOSPC."""
    if _code(exc) == _FULL or (isinstance(exc, OSError) and exc.errno == errno.ENOSPC):
        return True
    text = str(exc).lower()
    return "disk is full" in text or "no space left" in text


def is_save_fault(exc: BaseException) -> bool:
    """An error that stops saving without being a bug in this program (those propagate)."""
    return isinstance(exc, sqlite3.OperationalError) or (
        isinstance(exc, sqlite3.DatabaseError) and is_corruption(exc))


def reason(exc: BaseException, path: Path | None = None) -> str:
    """Why the database cannot be written, and what to do, as a clause for a sentence.
    With the database's ``path``, an I/O or open error is told apart by looking at its
    disk: full, mounted read-only, or a file or folder this user cannot write."""
    code = _code(exc)
    text = str(exc).lower()
    if is_disk_full(exc):
        return "the disk is full (free some space)"
    locked = code in (_BUSY, _LOCKED) or "locked" in text
    if path is not None and not locked and not is_corruption(exc):
        found = _disk_trouble(path)
        if found:
            return found
    if code == _READONLY or "readonly" in text or "read-only" in text:
        return _READ_ONLY
    if locked:
        return ("the conversation database is locked by another program "
                "(is another Hanasu running?)")
    if code in (_PERM, _CANTOPEN, _AUTH) or "unable to open" in text or isinstance(
            exc, PermissionError):
        return "the conversation database cannot be opened (check its folder's permissions)"
    if code == _IOERR or "i/o error" in text:
        return ("the disk reported an error reading or writing it (check the disk, and that "
                "it has free space)")
    if is_corruption(exc):
        return "the conversation database is damaged (restarting Hanasu sets it aside)"
    return f"the conversation database failed ({exc})"


def _disk_trouble(path: Path) -> str:
    """What is wrong with the disk or folder holding ``path``, or "" when nothing is seen."""
    folder = path.parent
    statvfs = getattr(os, "statvfs", None)  # not on Windows
    try:
        disk = statvfs(folder) if statvfs is not None else None
        if disk is not None and disk.f_flag & os.ST_RDONLY:
            return ("the disk holding the conversation database is mounted read-only "
                    "(remount it read-write)")
        if disk is not None and disk.f_bavail * disk.f_frsize < LOW_SPACE_BYTES:
            return "the disk is full (free some space)"
        if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            return _READ_ONLY
    except OSError:
        return ""
    return ""
