"""Tools on an OpenAI-compatible server: the request's field, the history messages, and
calls collected from streamed deltas however the server cuts them."""

from __future__ import annotations

import json

from app.tools.openai_format import (
    ToolCallDeltas,
    assistant_message,
    finished_with_calls,
    tool_message,
    tools_field,
)
from app.tools.spec import ToolCall, ToolResult, ToolSpec

SPEC = ToolSpec("set_timer", "Start a timer.", {"type": "object", "properties": {
    "seconds": {"type": "integer"}}, "required": ["seconds"]}, side_effects=True)


def _chunk(tool_calls: list[dict[str, object]] | None = None,
           finish: str | None = None) -> dict[str, object]:
    delta: dict[str, object] = {} if tool_calls is None else {"tool_calls": tool_calls}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_the_tools_field_is_openai_functions() -> None:
    assert tools_field([SPEC]) == [{"type": "function", "function": {
        "name": "set_timer", "description": "Start a timer.",
        "parameters": {"type": "object", "properties": {"seconds": {"type": "integer"}},
                       "required": ["seconds"]}}}]


def test_a_call_cut_into_pieces_is_put_back_together() -> None:
    deltas = ToolCallDeltas(language="zh")
    arguments = json.dumps({"seconds": 300, "label": "面条"}, ensure_ascii=False)
    deltas.feed(_chunk([{"index": 0, "id": "call_9", "type": "function",
                         "function": {"name": "set_timer", "arguments": ""}}]))
    for i in range(0, len(arguments), 4):
        deltas.feed(_chunk([{"index": 0, "function": {"arguments": arguments[i:i + 4]}}]))
    deltas.feed({"choices": [{"delta": {"content": "ignored"}, "finish_reason": None}]})
    last = _chunk(finish="tool_calls")
    deltas.feed(last)
    assert finished_with_calls(last) and not finished_with_calls(_chunk(finish="stop"))
    read = deltas.read()
    assert read.calls == (ToolCall("set_timer", {"seconds": 300, "label": "面条"}, "call_9",
                                   "zh"),)
    assert read.malformed == ()


def test_parallel_calls_whole_calls_and_broken_ones() -> None:
    deltas = ToolCallDeltas()
    deltas.feed(_chunk([
        {"index": 1, "id": "b", "function": {"name": "list_timers", "arguments": "{}"}},
        {"index": 0, "id": "a", "function": {"name": "set_timer",
                                              "arguments": {"seconds": 5}}},
        {"index": 2, "id": "c", "function": {"name": "set_timer", "arguments": "{\"sec"}},
        {"index": 3, "id": "d", "function": {"arguments": "{}"}},
    ]))
    read = deltas.read()
    assert [(c.call_id, c.name, dict(c.arguments)) for c in read.calls] == [
        ("a", "set_timer", {"seconds": 5}), ("b", "list_timers", {})]
    assert len(read.malformed) == 2


def test_no_deltas_no_calls() -> None:
    deltas = ToolCallDeltas()
    deltas.feed(_chunk())
    deltas.feed({"choices": []})
    assert not deltas.any and deltas.read().calls == ()


def test_history_messages_answer_the_call_by_id() -> None:
    call = ToolCall("set_timer", {"seconds": 60}, "call_1")
    said = assistant_message([call])
    assert said["content"] is None
    assert said["tool_calls"] == [{"id": "call_1", "type": "function", "function": {
        "name": "set_timer", "arguments": '{"seconds": 60}'}}]
    assert tool_message(call, ToolResult("Timer 1 set.", "Timer set.")) == {
        "role": "tool", "tool_call_id": "call_1", "name": "set_timer",
        "content": "Timer 1 set."}
