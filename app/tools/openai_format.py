"""Tools for a model on an OpenAI-compatible server: the request's ``tools`` field, the
history messages of a call and its result, and calls read from streamed ``tool_calls``
deltas.

A server streams a call in pieces: the first delta of each call carries its ``index``,
``id`` and ``function.name``, later ones more of ``function.arguments`` (a JSON text cut
anywhere); llama-server and vLLM may send it whole. The reply's ``finish_reason`` is then
``"tool_calls"``. Nothing here touches the network: the adapter passes each decoded event.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from app.tools.gemma4 import (
    CALL_CLOSE,
    CALL_OPEN,
    RESPONSE_CLOSE,
    RESPONSE_OPEN,
    CallSyntaxError,
    Q,
    parse_call,
)
from app.tools.spec import ToolCall, ToolResult, ToolSpec, new_call_id

MAX_ARGUMENT_CHARS = 16000
"""A call's arguments longer than this are not read (a runaway stream)."""


def tools_field(specs: Iterable[ToolSpec]) -> list[dict[str, object]]:
    """The request body's ``tools``: ``body["tools"] = tools_field(registry.specs)``."""
    return [{"type": "function", "function": {
        "name": s.name, "description": s.description, "parameters": dict(s.parameters)}}
        for s in specs]


def assistant_message(calls: Sequence[ToolCall], content: str = "") -> dict[str, object]:
    """The model's turn that made ``calls``, for the next request's ``messages``."""
    return {"role": "assistant", "content": content or None, "tool_calls": [
        {"id": c.call_id, "type": "function",
         "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments),
                                                              ensure_ascii=False)}}
        for c in calls]}


def tool_message(call: ToolCall, result: ToolResult) -> dict[str, object]:
    """A call's result, answering it by id."""
    return {"role": "tool", "tool_call_id": call.call_id, "name": call.name,
            "content": result.text}


def finished_with_calls(event: Mapping[str, object]) -> bool:
    """This chunk ends the reply to have its calls run."""
    choice = _choice(event)
    return choice is not None and choice.get("finish_reason") in ("tool_calls", "function_call")


def _choice(event: Mapping[str, object]) -> Mapping[str, object] | None:
    choices = event.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        return choices[0]
    return None


@dataclass
class _Partial:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    size: int = 0


@dataclass(frozen=True)
class ReadCalls:
    calls: tuple[ToolCall, ...]
    malformed: tuple[str, ...]
    """Calls whose name is missing or whose arguments are not a JSON object."""


class ToolCallDeltas:
    """Collects one streamed reply's ``tool_calls`` deltas; ``read()`` once it ends."""

    def __init__(self, language: str = "en") -> None:
        self.language = language
        self._calls: dict[int, _Partial] = {}

    @property
    def any(self) -> bool:
        return bool(self._calls)

    def feed(self, event: Mapping[str, object]) -> None:
        """One decoded stream chunk (chunks without tool calls are ignored)."""
        choice = _choice(event)
        delta = choice.get("delta") if choice is not None else None
        pieces = delta.get("tool_calls") if isinstance(delta, Mapping) else None
        if not isinstance(pieces, list):
            return
        for position, piece in enumerate(pieces):
            if not isinstance(piece, Mapping):
                continue
            index = piece.get("index")
            key = index if isinstance(index, int) else len(self._calls) + position
            partial = self._calls.setdefault(key, _Partial())
            if isinstance(piece.get("id"), str) and piece["id"]:
                partial.call_id = str(piece["id"])
            function = piece.get("function")
            if not isinstance(function, Mapping):
                continue
            if isinstance(function.get("name"), str):
                partial.name += str(function["name"])
            more = function.get("arguments")
            if isinstance(more, Mapping):  # some servers send an object, not its text
                more = json.dumps(more)
            if isinstance(more, str) and partial.size <= MAX_ARGUMENT_CHARS:
                partial.arguments.append(more)
                partial.size += len(more)

    def read(self) -> ReadCalls:
        calls: list[ToolCall] = []
        malformed: list[str] = []
        for _, partial in sorted(self._calls.items()):
            text = "".join(partial.arguments).strip() or "{}"
            try:
                arguments = json.loads(text) if partial.size <= MAX_ARGUMENT_CHARS else None
            except ValueError:
                arguments = None
            if not partial.name or not isinstance(arguments, dict):
                malformed.append(f"{partial.name or '?'}({text[:200]})")
                continue
            calls.append(ToolCall(partial.name, arguments, partial.call_id or new_call_id(),
                                  self.language))
        return ReadCalls(tuple(calls), tuple(malformed))


def _response(body: str) -> tuple[str, str] | None:
    """``response:NAME{value:<|"|>TEXT<|"|>}`` (what ``gemma4.response_text`` wrote)."""
    head, _, rest = body.partition("{value:" + Q)
    name = head.strip().removeprefix("response:")
    if not rest.endswith(Q + "}") or not name:
        return None
    return name, rest[: -len(Q + "}")]


def round_messages(written: str, language: str = "en") -> list[dict[str, object]]:
    """A reply's tool rounds so far as OpenAI messages: the app keeps one transcript of a
    reply with tools, in Gemma 4's markers (``tool_rounds``); a server model gets it back
    as assistant turns with ``tool_calls`` and ``tool`` messages answering them by id."""
    messages: list[dict[str, object]] = []
    content: list[str] = []
    calls: list[ToolCall] = []
    answered = 0
    at = 0
    while at < len(written):
        opens = [(written.find(m, at), m) for m in (CALL_OPEN, RESPONSE_OPEN)]
        found = [(i, m) for i, m in opens if i >= 0]
        if not found:
            content.append(written[at:])
            break
        start, marker = min(found)
        content.append(written[at:start])
        close = CALL_CLOSE if marker == CALL_OPEN else RESPONSE_CLOSE
        end = written.find(close, start)
        if end < 0:
            break  # an unfinished marker is nothing the model said yet
        body = written[start + len(marker):end]
        at = end + len(close)
        if marker == CALL_OPEN:
            try:
                calls.append(parse_call(body, language))
            except CallSyntaxError:
                content.append(written[start:at])  # what the model wrote, kept as text
            continue
        response = _response(body)
        if response is None or answered >= len(calls):
            continue
        if answered == 0:
            messages.append(assistant_message(calls, "".join(content).strip()))
            content = []
        result = ToolResult(response[1], "")
        messages.append(tool_message(calls[answered], result))
        answered += 1
        if answered == len(calls):
            calls, answered = [], 0
    return messages
