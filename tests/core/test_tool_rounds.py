"""A reply with tool calls in the model's own format (Gemma 4's, as a scripted model writes
it): the calls are never spoken, each runs and its response goes back to the model, which
goes on in the same turn; a hanging tool is bounded, a cancelled turn stops the tool."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence

from app.core.ports import CallsTools, ChatMessage, PromptStats
from app.core.tool_rounds import reply_with_tools, run_bounded
from app.tools.gemma4 import CALL_CLOSE, CALL_OPEN, RESPONSE_OPEN
from app.tools.spec import ToolCall, ToolResult, ToolSpec

CALL = CALL_OPEN + "call:set_timer{seconds:120}" + CALL_CLOSE


class ScriptedGemma:
    """Writes what Gemma 4 writes: a few words, a call (and stops at its response
    marker); after the response, a sentence about it."""

    def __init__(self, first: Sequence[str], after: Sequence[str]) -> None:
        self.first, self.after = first, after
        self.written: list[str] = []
        self.offered: Sequence[ToolSpec] = ()

    def offer_tools(self, specs: Sequence[ToolSpec]) -> bool:
        self.offered = specs
        return True

    def stream(self, messages: Sequence[ChatMessage], cancelled: Callable[[], bool],
               on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        yield from self.first

    def stream_after(self, messages: Sequence[ChatMessage], written: str,
                     cancelled: Callable[[], bool],
                     on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        self.written.append(written)
        yield from self.after

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        return PromptStats(0, 0)


def test_a_call_is_run_answered_and_never_spoken() -> None:
    model = ScriptedGemma(["Sure", "!", " <|tool", "_call>call:set_", "timer{seconds:120}",
                           CALL_CLOSE], ["Your", " two minute timer", " is running."])
    assert isinstance(model, CallsTools)
    ran: list[ToolCall] = []

    def run(call: ToolCall, cancel: threading.Event) -> ToolResult:
        ran.append(call)
        return ToolResult("Timer set: 120 s.", "Timer set.")

    said = "".join(reply_with_tools(model, [], lambda: False, None, run, "en",
                                    first=model.stream([], lambda: False)))
    assert said == "Sure! Your two minute timer is running."
    assert [(c.name, c.arguments) for c in ran] == [("set_timer", {"seconds": 120})]
    [written] = model.written  # what the model goes on after: its call, then the response
    assert written.startswith("Sure! " + CALL + RESPONSE_OPEN + "response:set_timer{")
    assert "Timer set: 120 s." in written


def test_no_call_is_the_plain_reply() -> None:
    model = ScriptedGemma(["Hello", " there."], ["never"])
    said = "".join(reply_with_tools(model, [], lambda: False, None,
                                    lambda c, e: ToolResult("", ""), "en",
                                    first=model.stream([], lambda: False)))
    assert said == "Hello there." and model.written == []


def test_a_hanging_tool_is_abandoned_and_a_cancelled_turn_stops_it() -> None:
    def hangs(call: ToolCall, cancel: threading.Event) -> ToolResult:
        cancel.wait(5)
        return ToolResult("stopped" if cancel.is_set() else "late", "")

    started = time.monotonic()
    result = run_bounded(hangs, ToolCall("slow", {}), lambda: False, timeout_s=0.2)
    assert not result.ok and "did not answer" in result.text
    assert time.monotonic() - started < 1.0
    cancelled = run_bounded(hangs, ToolCall("slow", {}), lambda: True, timeout_s=2.0)
    assert cancelled.text == "stopped"
