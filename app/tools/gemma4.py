"""Gemma 4's own tool format: declarations for the system turn, and its calls read from
the reply stream before anything is spoken.

As Gemma 4's chat template writes it (``chat_template.jinja`` of google/gemma-4-E2B-it,
``format_function_declaration``, ``format_argument``, ``format_tool_response_block``):

    <|tool>declaration:NAME{description:<|"|>...<|"|>,parameters:{properties:{KEY:{
        description:<|"|>...<|"|>,type:<|"|>STRING<|"|>}},required:[<|"|>KEY<|"|>],
        type:<|"|>OBJECT<|"|>}}<tool|>                 (one per tool, inside the system turn)
    <|tool_call>call:NAME{key:<|"|>text<|"|>,n:5,flag:true}<tool_call|>     (the model)
    <|tool_response>response:NAME{value:<|"|>result<|"|>}<tool_response|>   (the app)

Keys are sorted; strings sit between ``<|"|>`` tokens, unescaped; numbers and booleans
are bare. The model ends its call by writing ``<|tool_response>`` (an end token in its
generation config) and waits: the app appends ``response_text(...)`` and lets the same
model turn go on, with no new turn header. The template renders only ``description``,
``enum`` (strings), ``items`` (arrays), ``nullable`` and nested ``properties`` of each
argument, so ranges belong in the description; it skips an argument named like a schema
keyword (``type``, ``description``...), and so does ``declarations``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.tools.spec import ToolCall, ToolSpec

Q = '<|"|>'
DECLARATION_OPEN, DECLARATION_CLOSE = "<|tool>", "<tool|>"
CALL_OPEN, CALL_CLOSE = "<|tool_call>", "<tool_call|>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<|tool_response>", "<tool_response|>"
_SCHEMA_KEYS = ("description", "type", "properties", "required", "nullable")
MAX_CALL_CHARS = 8000
"""A call longer than this is not a call (a model that never closes one): dropped, unsaid."""


def argument(value: object, escape_keys: bool = True) -> str:
    """``format_argument``: a JSON value in Gemma 4's notation."""
    if isinstance(value, str):
        return Q + value + Q
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        return "{" + ",".join((Q + str(k) + Q if escape_keys else str(k)) + ":"
                              + argument(v, escape_keys) for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(argument(v, escape_keys) for v in value) + "]"
    return str(value)


def _quoted_list(items: object) -> str:
    return ",".join(Q + str(i) + Q for i in items) if isinstance(items, list) else ""


def _property(value: Mapping[str, object]) -> str:
    kind = str(value.get("type", "")).upper()
    parts: list[str] = []
    if value.get("description"):
        parts.append(f"description:{Q}{value['description']}{Q}")
    items = value.get("items")
    if kind == "STRING" and value.get("enum"):
        parts.append("enum:" + argument(value["enum"]))
    elif kind == "ARRAY" and isinstance(items, Mapping) and items:
        parts.append("items:{" + _items(items) + "}")
    if value.get("nullable"):
        parts.append("nullable:true")
    if kind == "OBJECT":
        inner = value.get("properties")
        parts.append("properties:{" + _properties(inner if isinstance(inner, Mapping)
                                                  else value) + "}")
        if value.get("required"):
            parts.append("required:[" + _quoted_list(value.get("required")) + "]")
    parts.append(f"type:{Q}{kind}{Q}")
    return "{" + ",".join(parts) + "}"


def _items(items: Mapping[str, object]) -> str:
    parts: list[str] = []
    for key, value in sorted(items.items()):
        if value is None:
            continue
        if key == "properties" and isinstance(value, Mapping):
            parts.append("properties:{" + _properties(value) + "}")
        elif key == "required":
            parts.append("required:[" + _quoted_list(value) + "]")
        elif key == "type":
            upper = value.upper() if isinstance(value, str) else [
                str(v).upper() for v in value] if isinstance(value, list) else value
            parts.append("type:" + argument(upper))
        else:
            parts.append(f"{key}:" + argument(value))
    return ",".join(parts)


def _properties(properties: Mapping[str, object]) -> str:
    return ",".join(f"{key}:" + _property(value)
                    for key, value in sorted(properties.items())
                    if key not in _SCHEMA_KEYS and isinstance(value, Mapping))


def declaration(spec: ToolSpec) -> str:
    """One tool as the template declares it, markers included."""
    text = f"declaration:{spec.name}{{description:{Q}{spec.description}{Q}"
    params = spec.parameters
    properties, required = params.get("properties"), params.get("required")
    text += ",parameters:{"
    if isinstance(properties, Mapping) and properties:
        text += "properties:{" + _properties(properties) + "},"
    if required:
        text += "required:[" + _quoted_list(required) + "],"
    text += f"type:{Q}OBJECT{Q}}}}}"
    return DECLARATION_OPEN + text + DECLARATION_CLOSE


def declarations(specs: Iterable[ToolSpec]) -> str:
    """Every tool's declaration, to follow the system prompt inside the system turn."""
    return "".join(declaration(spec) for spec in specs)


def call_text(call: ToolCall) -> str:
    """A call as the model writes it (for a conversation's history)."""
    body = ",".join(f"{k}:" + argument(v, escape_keys=False)
                    for k, v in sorted(call.arguments.items()))
    return f"{CALL_OPEN}call:{call.name}{{{body}}}{CALL_CLOSE}"


def response_text(name: str, result: str) -> str:
    """A tool's result as the template writes a string response."""
    return f"{RESPONSE_OPEN}response:{name}{{value:{Q}{result}{Q}}}{RESPONSE_CLOSE}"


class CallSyntaxError(ValueError):
    """The text between the call markers is not ``call:NAME{...}``."""


_NAME = re.compile(r"\s*call:\s*([A-Za-z_][A-Za-z0-9_\-.]*)\s*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_BARE_KEY = re.compile(r"[^\s:{}\[\],]+")


def parse_call(body: str, language: str = "en") -> ToolCall:
    """``call:NAME{...}`` (what stands between the markers) as a ``ToolCall``."""
    match = _NAME.match(body)
    if not match:
        raise CallSyntaxError("no call:NAME")
    reader = _Reader(body, match.end())
    arguments = reader.value() if reader.peek() == "{" else {}
    if not isinstance(arguments, dict) or reader.rest().strip():
        raise CallSyntaxError("the arguments are not one {...}")
    return ToolCall(match.group(1), arguments, language=language)


class _Reader:
    def __init__(self, text: str, at: int) -> None:
        self.text, self.at = text, at

    def peek(self) -> str:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1
        return self.text[self.at : self.at + 1]

    def rest(self) -> str:
        return self.text[self.at :]

    def value(self) -> object:
        char = self.peek()
        if self.text.startswith(Q, self.at):
            end = self.text.find(Q, self.at + len(Q))
            if end < 0:
                raise CallSyntaxError("a string is not closed")
            text, self.at = self.text[self.at + len(Q) : end], end + len(Q)
            return text
        if char == '"':
            try:
                text, self.at = json.JSONDecoder().raw_decode(self.text, self.at)
            except ValueError as exc:
                raise CallSyntaxError("a quoted string is broken") from exc
            return text
        if char in "{[":
            return self._container(char)
        for word, meaning in (("true", True), ("false", False), ("null", None),
                              ("None", None)):  # the template writes Python's None
            if self.text.startswith(word, self.at):
                self.at += len(word)
                return meaning
        number = _NUMBER.match(self.text, self.at)
        if not number:
            raise CallSyntaxError(f"no value at {self.text[self.at:self.at + 12]!r}")
        self.at = number.end()
        found = number.group()
        return float(found) if any(c in found for c in ".eE") else int(found)

    def _container(self, opening: str) -> object:
        closing = "}" if opening == "{" else "]"
        self.at += 1
        mapping: dict[str, object] = {}
        sequence: list[object] = []
        while self.peek() != closing:
            if not self.peek():
                raise CallSyntaxError(f"{opening} is not closed")
            if opening == "{":
                key = self._key()
                if self.peek() != ":":
                    raise CallSyntaxError(f"no ':' after {key!r}")
                self.at += 1
                mapping[key] = self.value()
            else:
                sequence.append(self.value())
            if self.peek() == ",":
                self.at += 1
            elif self.peek() != closing:
                raise CallSyntaxError(f"expected ',' or {closing}")
        self.at += 1
        return mapping if opening == "{" else sequence

    def _key(self) -> str:
        if self.text.startswith(Q, self.at) or self.peek() == '"':
            return str(self.value())
        match = _BARE_KEY.match(self.text, self.at)
        if not match:
            raise CallSyntaxError("no key")
        self.at = match.end()
        return match.group()


@dataclass(frozen=True)
class StreamPiece:
    """What one piece of the reply stream holds once calls are taken out of it."""

    text: str = ""
    """Text to speak (never any part of a call)."""
    calls: tuple[ToolCall, ...] = ()
    malformed: tuple[str, ...] = ()
    """Calls that could not be read (their raw text, for the log and the model)."""


class CallStream:
    """Takes Gemma 4 calls out of a streamed reply, piece by piece.

    Text that could be the start of a marker is held back until it is clear, a call is
    buffered from ``<|tool_call>`` to its ``<tool_call|>`` (outside a ``<|"|>`` string),
    and once the model writes ``<|tool_response>`` it waits for results (``awaiting``):
    anything after that is not spoken."""

    def __init__(self, language: str = "en") -> None:
        self.language = language
        self._pending = ""
        self._call: str | None = None
        self.awaiting = False

    @property
    def in_call(self) -> bool:
        return self._call is not None

    def feed(self, text: str) -> StreamPiece:
        if self.awaiting:
            return StreamPiece()
        self._pending += text
        spoken: list[str] = []
        calls: list[ToolCall] = []
        malformed: list[str] = []
        while self._pending and not self.awaiting:
            if self._call is None:
                if not self._outside(spoken):
                    break
            elif not self._inside(calls, malformed):
                break
        return StreamPiece("".join(spoken), tuple(calls), tuple(malformed))

    def finish(self) -> StreamPiece:
        """The end of the reply: held text is spoken, an unclosed call is read if it can be."""
        piece = self.feed("")
        calls, malformed = list(piece.calls), list(piece.malformed)
        text = piece.text
        if self._call is not None:
            self._close(self._call + self._pending, calls, malformed)
        elif not self.awaiting:
            text += self._pending
        self._pending, self._call = "", None
        return StreamPiece(text, tuple(calls), tuple(malformed))

    def _outside(self, spoken: list[str]) -> bool:
        """Speak up to the next marker; False when waiting for more text."""
        starts = [(at, m) for m in (CALL_OPEN, RESPONSE_OPEN)
                  if (at := self._pending.find(m)) >= 0]
        if starts:
            at, marker = min(starts)
            spoken.append(self._pending[:at])
            self._pending = self._pending[at + len(marker) :]
            if marker == RESPONSE_OPEN:
                self.awaiting, self._pending = True, ""
            else:
                self._call = ""
            return True
        keep = max(_partial(self._pending, m) for m in (CALL_OPEN, RESPONSE_OPEN))
        spoken.append(self._pending[: len(self._pending) - keep])
        self._pending = self._pending[len(self._pending) - keep :]
        return False

    def _inside(self, calls: list[ToolCall], malformed: list[str]) -> bool:
        assert self._call is not None
        body = self._call + self._pending
        end = _close_at(body)
        if end < 0:
            if len(body) > MAX_CALL_CHARS:
                malformed.append(body[:200])
                self._call, self._pending, self.awaiting = None, "", True
                return False
            self._call, self._pending = body, ""
            return False
        self._close(body[:end], calls, malformed)
        self._call, self._pending = None, body[end + len(CALL_CLOSE) :]
        return True

    def _close(self, body: str, calls: list[ToolCall], malformed: list[str]) -> None:
        try:
            calls.append(parse_call(body, self.language))
        except CallSyntaxError:
            malformed.append(body[:200])


def _close_at(body: str) -> int:
    """Where ``<tool_call|>`` closes the call (outside strings), or -1."""
    inside, at = False, 0
    while True:
        quote, end = body.find(Q, at), body.find(CALL_CLOSE, at)
        if quote < 0 and end < 0:
            return -1
        if quote >= 0 and (end < 0 or quote < end):
            inside, at = not inside, quote + len(Q)
        elif inside:
            at = end + len(CALL_CLOSE)
        else:
            return end


def _partial(text: str, marker: str) -> int:
    for k in range(min(len(marker) - 1, len(text)), 0, -1):
        if text.endswith(marker[:k]):
            return k
    return 0


def split_calls(text: str, language: str = "en") -> tuple[str, list[ToolCall]]:
    """A whole reply's spoken text and its calls (a non-streaming reply)."""
    stream = CallStream(language)
    pieces: Sequence[StreamPiece] = (stream.feed(text), stream.finish())
    return "".join(p.text for p in pieces), [c for p in pieces for c in p.calls]
