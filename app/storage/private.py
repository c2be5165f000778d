"""Folders and files only their owner can read: conversations, memories and the log.

Modes are set explicitly (not left to the umask), at creation and again at startup for
files an earlier version made readable by everyone. On Windows, where ``chmod`` only
toggles the read-only bit, the user's profile ACLs already keep these folders private.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
_POSIX = os.name == "posix"


def private_dir(folder: Path) -> Path:
    """Create ``folder`` (and its parents) and make it 0700; raises OSError if it cannot be
    created. Only ``folder`` itself is tightened: its parents belong to the user."""
    folder.mkdir(parents=True, exist_ok=True)
    if _POSIX:
        with contextlib.suppress(OSError):  # not ours (a shared mount): it still works
            os.chmod(folder, DIR_MODE)
    return folder


def private_file(path: Path) -> None:
    """Make an existing ``path`` 0600; a missing file or a failing chmod is left alone."""
    if _POSIX:
        with contextlib.suppress(OSError):
            os.chmod(path, FILE_MODE)


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless it exists (then only its mode is fixed)."""
    if not _POSIX:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        private_file(path)
        return
    try:
        os.fchmod(fd, FILE_MODE)  # os.open's mode is masked by the umask
    finally:
        os.close(fd)
