"""Errors as the user sees them: one line.

A neutral, import-light module so adapters (model files, servers) and storage (settings, user
files) word failures the same way without storage importing adapters.
"""

from __future__ import annotations


def first_line(exc: BaseException) -> str:
    """An exception as one line for the user: its first non-blank line, or its type's name.

    Library messages often carry a multi-line dump (a parser's context, a server's body)
    that would break a status line or a log entry.
    """
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__
