"""One way to write a user file: a temporary file beside it, fsync, rename.

A crash, a full disk or a kill leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_text_atomically(path: Path, text: str, owner_only: bool = False) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path``; raises OSError. ``owner_only``
    makes the file readable by its owner alone (it holds a secret; Unix; Windows has ACLs)."""
    tmp_name: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
        if owner_only and hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
        tmp_name = None
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
