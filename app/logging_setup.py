"""Logging is configured once, at startup, never at import.

Console gets warnings (info with -v); the rotating file in the user log dir keeps info,
so a crash of the frozen app leaves something readable.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys

from app.paths import user_log_dir


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
        folder = user_log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        file_handler = logging.handlers.RotatingFileHandler(
            folder / "hanasu.log", maxBytes=2_000_000, backupCount=3, encoding="utf-8"
        )
        file_handler.setLevel(logging.INFO)
        file_handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s")
        )
        root.addHandler(file_handler)
    except OSError as exc:  # a read-only or full disk must not stop the app
        console.handle(
            logging.makeLogRecord(
                {
                    "msg": f"file logging disabled: {exc}",
                    "levelno": logging.WARNING,
                    "levelname": "WARNING",
                }
            )
        )
    root._hanasu_configured = True  # type: ignore[attr-defined]
