"""Read a file the user (or anyone with access to their home folder) could have edited.

Python's json and tomllib parsers recurse once per nesting level, so ``[[[[...]]]]`` 5,000
deep raises RecursionError, and a TOML dotted key ``a.a.a...`` builds a 5,000-deep dict
that crashes whoever prints it later. Every user file therefore goes through here:

1. the size is capped before anything is read into memory;
2. the text must be UTF-8;
3. a cheap scan (brackets outside strings and comments, dotted-key length) rejects
   deep nesting before the recursive parser ever sees it;
4. the parsed value's depth is checked again without recursion, as a backstop.

Every problem is a ``UserFileError`` whose message is one line fit for the user. Pure
Python, no Qt or ML imports: the core, the personas and the model manifest all use it.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from app.errors import first_line

KIB = 1024
MIB = 1024 * KIB
DEFAULT_MAX_BYTES = 1 * MIB
DEFAULT_MAX_DEPTH = 32

Syntax = Literal["json", "toml", "text"]


class UserFileError(ValueError):
    """A user file is too big, too deeply nested, not UTF-8 or not parseable; one line."""


class UnreadableFileError(UserFileError):
    """The file could not be read at all (permissions, a folder, an I/O error): nothing
    is known about its content, so callers should leave it where it is."""


def read_text(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The file's text, refusing files over ``max_bytes`` (checked before reading them)."""
    try:
        if not path.exists():
            raise UnreadableFileError("it does not exist")
        if not path.is_file():  # a folder, a FIFO (would block) or a device
            raise UnreadableFileError("it is not a regular file")
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise UnreadableFileError(f"cannot read it ({exc.strerror or exc})") from exc
    if len(data) > max_bytes:
        raise UserFileError(f"it is larger than {_size(max_bytes)}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserFileError(f"it is not UTF-8 text (byte {exc.start})") from exc


def parse_json(text: str, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """``json.loads`` that cannot recurse without bound."""
    check_nesting(text, "json", max_depth)
    try:
        value = json.loads(text)
    except RecursionError as exc:  # the scan should have caught it; never let it escape
        raise UserFileError(f"it is nested more than {max_depth} levels deep") from exc
    except ValueError as exc:
        raise UserFileError(f"it is not valid JSON ({first_line(exc)})") from exc
    check_depth(value, max_depth)
    return value


def parse_toml(text: str, *, max_depth: int = DEFAULT_MAX_DEPTH) -> dict[str, Any]:
    """``tomllib.loads`` that cannot recurse without bound."""
    check_nesting(text, "toml", max_depth)
    try:
        value = tomllib.loads(text)
    except RecursionError as exc:
        raise UserFileError(f"it is nested more than {max_depth} levels deep") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UserFileError(f"it is not valid TOML ({first_line(exc)})") from exc
    check_depth(value, max_depth)
    return value


def load_json(
    path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH
) -> Any:
    """Read and parse a JSON user file; raises UserFileError."""
    return parse_json(read_text(path, max_bytes=max_bytes), max_depth=max_depth)


def load_toml(
    path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH
) -> dict[str, Any]:
    """Read and parse a TOML user file; raises UserFileError."""
    return parse_toml(read_text(path, max_bytes=max_bytes), max_depth=max_depth)


# ---- the pre-parse scan -------------------------------------------------------------

_JSON_STOPS = re.compile(r'[\[\]{}"]')
_TOML_STOPS = re.compile(r"""[\[\]{}"'#.\n=,]""")
_JSON_STRING_END = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_TOML_BASIC_END = re.compile(r'[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_TOML_LITERAL_END = re.compile(r"[^'\n]*'")
_TOML_ML_BASIC_END = re.compile(r'[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""', re.DOTALL)
_TOML_ML_LITERAL_END = re.compile(r"[^']*(?:'(?!'')[^']*)*'''")


def check_nesting(text: str, syntax: Syntax, max_depth: int) -> None:
    """Raise UserFileError if brackets (outside strings and comments) nest deeper than
    ``max_depth``, or, for TOML, a dotted key has more than ``max_depth`` parts.

    Linear time: the gaps between interesting characters and whole strings are skipped
    by compiled regexes. An unterminated string ends the scan: the parser then rejects
    the file without recursing.
    """
    if syntax == "text":
        return
    toml = syntax == "toml"
    stops = _TOML_STOPS if toml else _JSON_STOPS
    depth = 0
    key_dots = 0
    in_key = True
    pos = 0
    end = len(text)
    while pos < end:
        found = stops.search(text, pos)
        if found is None:
            return
        char = found.group()
        pos = found.end()
        if char in "[{":
            depth += 1
            if depth > max_depth:
                raise UserFileError(f"it is nested more than {max_depth} levels deep")
            if char == "{":
                in_key, key_dots = True, 0
        elif char in "]}":
            depth = max(depth - 1, 0)
        elif char == '"' or char == "'":
            closing = _string_end(text, pos, char, toml)
            if closing is None:
                return
            pos = closing
        elif char == "#":
            newline = text.find("\n", pos)
            pos = end if newline < 0 else newline
        elif char == ".":
            if in_key:
                key_dots += 1
                if key_dots >= max_depth:
                    raise UserFileError(f"a key has more than {max_depth} dotted parts")
        elif char == "=":
            in_key = False
        else:  # newline or comma: a new key may start
            in_key, key_dots = True, 0


def _string_end(text: str, pos: int, quote: str, toml: bool) -> int | None:
    """Index just past the string that started at ``pos - 1``, or None if unterminated."""
    if not toml:
        match = _JSON_STRING_END.match(text, pos)
    elif text.startswith(quote * 2, pos):
        if quote == '"':
            match = _TOML_ML_BASIC_END.match(text, pos + 2)
        else:
            match = _TOML_ML_LITERAL_END.match(text, pos + 2)
    elif quote == '"':
        match = _TOML_BASIC_END.match(text, pos)
    else:
        match = _TOML_LITERAL_END.match(text, pos)
    return None if match is None else match.end()


def check_depth(value: Any, max_depth: int) -> None:
    """Raise UserFileError if containers in ``value`` nest deeper than ``max_depth``
    (iterative, so it works on any structure a parser returned)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            raise UserFileError(f"it is nested more than {max_depth} levels deep")
        stack.extend((child, depth + 1) for child in children)


def _size(n: int) -> str:
    if n >= MIB:
        return f"{n / MIB:g} MiB"
    return f"{n / KIB:g} KiB"
