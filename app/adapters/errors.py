"""Errors the adapters raise for user-fixable problems (missing or corrupt model files).

The app shows ``str(error)`` as one line; no traceback is needed for these.
"""

from __future__ import annotations


class EngineLoadError(RuntimeError):
    """An engine could not be loaded; the message names the file and says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def first_line(exc: BaseException) -> str:
    """A library exception as one line for the user (its first line, or its type)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
