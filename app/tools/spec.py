"""What a tool is: its declaration, a call, its result, and the registry that runs calls.

A tool is declared once (``ToolSpec``); ``gemma4`` and ``openai_format`` write that one
declaration in each model's own format. A call (``ToolCall``), whoever made it (the model,
or a rule in ``intents``), goes through ``ToolRegistry.run``: the arguments are checked
against the declared schema first, and whatever goes wrong comes back as a failed
``ToolResult`` for the model to read, never as an exception into the turn.
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from app.tools.schema import errors

log = logging.getLogger(__name__)

Arguments = Mapping[str, object]
"""A call's arguments as JSON decodes them (str, int, float, bool, None, lists, dicts)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""A name both formats can carry: Gemma 4 writes it bare (``call:NAME{``), OpenAI caps 64."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is told about it."""

    name: str
    description: str
    parameters: Mapping[str, object]
    """JSON Schema of the arguments: an object with ``properties`` and ``required``."""
    side_effects: bool
    """It changes something outside the conversation (a timer set, a note kept): such a
    call is said aloud when it is done, and a later MCP server's may ask first."""

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"tool name {self.name!r}: letters, digits and _ only, 64 at most")
        if self.parameters.get("type") != "object":
            raise ValueError(f"tool {self.name}: parameters must be a JSON Schema object")


def new_call_id() -> str:
    return "call_" + uuid.uuid4().hex[:16]


@dataclass(frozen=True)
class ToolCall:
    """One request to run a tool."""

    name: str
    arguments: Arguments = field(default_factory=dict)
    call_id: str = field(default_factory=new_call_id)
    """The model's id for it (OpenAI's ``tool_calls[].id``) or a new one; the result
    message names it."""
    language: str = "en"
    """The language the user spoke (``en``, ``ja``, ``zh``): the spoken summary's."""
    turn_id: int | None = None
    """The turn whose reply made it (the model's calls): what it did is said or taken
    back with that turn."""


@dataclass(frozen=True)
class ToolResult:
    """What a call did: ``text`` for the model, ``spoken`` for the user."""

    text: str
    """For the model's next turn (English, precise: ids, times, numbers)."""
    spoken: str
    """A short confirmation in the call's language ("Timer set for five minutes."), spoken
    as it is when no model follows (the rule-based path)."""
    ok: bool = True

    @classmethod
    def failure(cls, text: str, spoken: str = "") -> ToolResult:
        return cls(text, spoken, ok=False)


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        """Do it. Long work checks ``cancel`` (set when the turn is cancelled) and stops;
        the arguments were already checked against ``spec.parameters``."""
        ...


class ToolRegistry:
    """The tools a conversation may use, by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        name = tool.spec.name
        if name in self._tools:
            raise ValueError(f"two tools are called {name}")
        self._tools[name] = tool

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    def names(self) -> frozenset[str]:
        return frozenset(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def problems(self, call: ToolCall) -> list[str]:
        """Why ``call`` cannot run as it is ([] when it can)."""
        tool = self._tools.get(call.name)
        if tool is None:
            return [f"there is no tool called {call.name!r}"]
        return errors(tool.spec.parameters, dict(call.arguments))

    def run(self, call: ToolCall, cancel: threading.Event | None = None) -> ToolResult:
        """Run ``call``; a bad call, a cancelled turn or a failing tool is a failed result."""
        cancel = cancel or threading.Event()
        problems = self.problems(call)
        if problems:
            return ToolResult.failure(f"{call.name} was not run: {'; '.join(problems)}.")
        if cancel.is_set():
            return ToolResult.failure(f"{call.name} was not run: the turn was cancelled.")
        try:
            return self._tools[call.name].run(call.arguments, cancel, call.language)
        except Exception as exc:  # a tool's bug must not end the conversation
            log.exception("tool %s failed", call.name)
            return ToolResult.failure(f"{call.name} failed: {type(exc).__name__}: {exc}")
