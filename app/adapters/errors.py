"""Errors the adapters raise for user-fixable problems (missing or corrupt model files).

The app shows ``str(error)`` as one line; no traceback is needed for these. ``first_line``
lives in app.errors (storage words its errors with it too) and is re-exported here for the
adapters.
"""

from __future__ import annotations

from app.errors import first_line

__all__ = ["EngineLoadError", "first_line"]


class EngineLoadError(RuntimeError):
    """An engine could not be loaded; the message names the file and says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

