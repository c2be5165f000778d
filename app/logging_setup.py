"""Logging is configured once, at startup, never at import.

Console gets warnings (info with -v); the rotating file in the user log dir keeps info,
so a crash of the frozen app leaves something readable. The log folder is 0700 and its
files 0600 (they name files and personas of the user). A log file that cannot be written
(a full disk, a read-only mount) is said once, on stderr, and then left quiet.
"""

from __future__ import annotations

import contextlib
import io
import logging
import logging.handlers
import os
import sys
from pathlib import Path

from app.paths import user_log_dir
from app.storage.private import FILE_MODE, private_dir, private_file

LOG_FILE = "hanasu.log"
BACKUPS = 3


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose files are created 0600, that goes quiet after a write fails.

    The standard handler prints a traceback to stderr for every record it cannot write;
    on a full disk that is every log line. This one prints one line and then drops
    records until a write succeeds again."""

    def __init__(self, filename: Path, max_bytes: int, backups: int) -> None:
        self.failing = False
        self._failed_now = False
        super().__init__(filename, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
        private_file(Path(self.baseFilename))  # os.open's mode is masked by the umask
        return os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)

    def emit(self, record: logging.LogRecord) -> None:
        self._failed_now = False
        super().emit(record)  # calls handleError on failure
        if not self._failed_now:
            self.failing = False

    def handleError(self, record: logging.LogRecord) -> None:
        self._failed_now = True
        if self.failing:
            return
        self.failing = True
        error = sys.exc_info()[1]
        detail = getattr(error, "strerror", None) or error
        with contextlib.suppress(OSError, ValueError):  # stderr gone too: nothing to tell
            sys.stderr.write(f"hanasu: cannot write the log file {self.baseFilename} "
                             f"({detail}); file logging is paused until it can.\n")


def configure_logging(verbose: bool = False) -> None:
    root = logging.getLogger()
    if getattr(root, "_hanasu_configured", False):
        return
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.DEBUG if verbose else logging.WARNING)
    console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(console)
    try:
        folder = private_dir(user_log_dir())
        for n in range(BACKUPS + 1):  # made readable by everyone by earlier versions
            private_file(folder / (LOG_FILE if n == 0 else f"{LOG_FILE}.{n}"))
        file_handler = PrivateRotatingFileHandler(folder / LOG_FILE, 2_000_000, BACKUPS)
        file_handler.setLevel(logging.INFO)
        file_handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s")
        )
        root.addHandler(file_handler)
    except OSError as exc:  # a read-only or full disk must not stop the app
        where = exc.filename or user_log_dir() / LOG_FILE
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"hanasu: cannot write the log file {where} "
                             f"({exc.strerror or exc}); file logging is off.\n")
    root._hanasu_configured = True  # type: ignore[attr-defined]
