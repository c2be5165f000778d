"""An MCP server's tools as the app's own: their declarations checked and renamed, and
their answers turned into a ``ToolResult`` a voice can use.

A tool is offered to the model as ``<server>__<tool>`` (letters, digits and ``_``, 64 at
most, as ``ToolSpec`` requires), so two servers' ``search`` tools stay apart and the name
says whose it is. Its description and input schema pass through as the server wrote them,
within bounds: a schema that is not a JSON object schema, is nested deeper than the
formats render or is too big for a prompt is dropped, with the reason logged and shown in
the dialog. A tool has side effects unless the server declares it read-only
(``annotations.readOnlyHint``); when it says nothing, it is assumed to change things.

A server's answer may be anything: only its text reaches the model, capped, with control
characters taken out; images, sounds and links are named, not passed on. An answer with
no text at all, or one the server marks as an error, is a failed result with an apology
in the call's language (``phrases``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.tools import phrases
from app.tools.spec import Arguments, ToolResult, ToolSpec

if TYPE_CHECKING:
    from mcp.types import CallToolResult
    from mcp.types import Tool as ServerTool

log = logging.getLogger(__name__)

MAX_DESCRIPTION = 600
"""Characters of a tool's description kept (every tool's goes into every prompt)."""
MAX_SCHEMA_CHARS = 8000
MAX_SCHEMA_DEPTH = 8
"""Nesting of a schema's objects and lists: deeper is no tool a voice can call."""
MAX_RESULT_CHARS = 4000
"""Characters of an answer the model reads; a voice says a few sentences of it."""
NAME_LIMIT = 64
SEPARATOR = "__"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Offered:
    """One tool a server lists, as the app offers it."""

    server: str
    """The user's name for the server."""
    remote: str
    """Its name on the server (what a call sends, and what the settings key)."""
    spec: ToolSpec
    """Its namespaced name, description and schema as the model is told."""


@dataclass(frozen=True)
class Listing:
    """What a server offers: the usable tools, and a line for each one dropped."""

    tools: tuple[Offered, ...]
    dropped: tuple[str, ...] = ()


def clean_text(text: str) -> str:
    """A server's words without control characters or direction overrides."""
    return _CONTROL.sub("", text)


def tool_name(prefix: str, remote: str, taken: set[str]) -> str:
    """``<prefix>__<remote>`` in the characters a tool name may have, unique in ``taken``."""
    cleaned = re.sub(r"[^A-Za-z0-9_]+", "_", remote).strip("_") or "tool"
    base = f"{prefix}{SEPARATOR}{cleaned}"[:NAME_LIMIT]
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name, n = base[: NAME_LIMIT - len(suffix)] + suffix, n + 1
    taken.add(name)
    return name


def schema_problem(schema: object) -> str | None:
    """Why ``schema`` cannot be offered as a tool's parameters (None when it can)."""
    if not isinstance(schema, Mapping):
        return "its input schema is not a JSON object"
    if schema.get("type") != "object":
        return "its input schema does not describe an object"
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping) or not all(
            isinstance(k, str) and isinstance(v, Mapping) for k, v in properties.items()):
        return "its input schema's properties are not a map of schemas"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return "its input schema's required list is not a list of names"
    try:
        size = len(json.dumps(schema))
    except (TypeError, ValueError):
        return "its input schema is not plain JSON"
    if size > MAX_SCHEMA_CHARS:
        return f"its input schema is too big ({size} characters)"
    if _depth(schema) > MAX_SCHEMA_DEPTH:
        return "its input schema is nested too deep"
    return None


def _depth(value: object) -> int:
    if isinstance(value, Mapping):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def offered_tools(server: str, prefix: str, listed: Iterable[ServerTool]) -> Listing:
    """A server's listing as the app's tools; the ones that cannot be offered are dropped
    with a reason (logged here, shown in the dialog)."""
    tools: list[Offered] = []
    dropped: list[str] = []
    taken: set[str] = set()
    for item in listed:
        remote = item.name
        problem = schema_problem(item.input_schema)
        if problem is None and not remote.strip():
            problem = "it has no name"
        if problem is not None:
            line = f"{server}: tool {remote!r} left out: {problem}"
            log.warning("MCP %s", line)
            dropped.append(line)
            continue
        annotations = item.annotations
        read_only = annotations is not None and annotations.read_only_hint is True
        description = clean_text(item.description or item.title or remote)[:MAX_DESCRIPTION]
        spec = ToolSpec(tool_name(prefix, remote, taken), description,
                        dict(item.input_schema), side_effects=not read_only)
        tools.append(Offered(server, remote, spec))
    return Listing(tuple(tools), tuple(dropped))


def _piece(block: object) -> tuple[str, bool]:
    """One content block as text, and whether it was text the model can use."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(getattr(block, "text", "")), True
    if kind == "resource":
        text = getattr(getattr(block, "resource", None), "text", None)
        return (text, True) if isinstance(text, str) else ("[a file]", False)
    if kind == "resource_link":
        return f"[a link: {getattr(block, 'uri', '')}]", False
    return {"image": "[an image]", "audio": "[a sound]"}.get(kind, "[something else]"), False


@dataclass(frozen=True)
class Answer:
    """A server's answer as a result, and a fault line for the window when it was junk."""

    result: ToolResult
    fault: str | None = None


def answer(result: CallToolResult, offered: Offered, language: str) -> Answer:
    """The result of one call: its text for the model (capped), or an apology."""
    pieces = [_piece(block) for block in result.content]
    usable = any(ok for _, ok in pieces)
    text = "\n".join(piece for piece, _ in pieces).strip()
    if not usable and result.structured_content is not None:
        with contextlib.suppress(TypeError, ValueError):
            text, usable = json.dumps(result.structured_content, ensure_ascii=False), True
    text = clean_text(text)
    if len(text) > MAX_RESULT_CHARS:
        log.warning("MCP %s: the answer of %s was cut from %d characters", offered.server,
                    offered.remote, len(text))
        text = text[:MAX_RESULT_CHARS] + f" … (cut: the answer had {len(text)} characters)"
    apology = phrases.server_failed(offered.server, language)
    if result.is_error:
        return Answer(ToolResult.failure(
            f"{offered.spec.name} failed: {text or 'the server gave no reason'}", apology))
    if not usable:
        fault = f"The tool server {offered.server} answered {offered.remote} with nothing " \
                f"a voice can use ({text or 'no content'})."
        return Answer(sorry(f"{offered.spec.name} answered with no text "
                            f"({text or 'nothing'}).", apology), fault)
    said = text if len(text) <= 200 else text[:200] + "…"
    return Answer(ToolResult(text, said))


def sorry(text: str, spoken: str) -> ToolResult:
    """A failed call: what went wrong for the model, with the apology it should say."""
    return ToolResult.failure(f'{text} Tell the user: "{spoken}"', spoken)


class McpTool:
    """An app ``Tool`` whose ``run`` is a call to its server (through the hub)."""

    def __init__(self, offered: Offered,
                 call: Callable[[Offered, Arguments, threading.Event, str], ToolResult]) -> None:
        self.offered = offered
        self._call = call

    @property
    def spec(self) -> ToolSpec:
        return self.offered.spec

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        return self._call(self.offered, arguments, cancel, language)
