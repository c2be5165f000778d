"""The registry runs a call only with arguments its schema takes; anything that goes
wrong is a failed result, never an exception into the turn."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.tools.schema import errors
from app.tools.spec import Arguments, ToolCall, ToolRegistry, ToolResult, ToolSpec

SCHEMA = {"type": "object", "properties": {
    "seconds": {"type": "integer", "minimum": 1, "maximum": 60},
    "label": {"type": "string", "maxLength": 5},
    "kind": {"type": "string", "enum": ["timer", "reminder"]},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}},
    "required": ["seconds"], "additionalProperties": False}


class Echo:
    spec = ToolSpec("echo", "Says its arguments back.", SCHEMA, side_effects=False)

    def __init__(self) -> None:
        self.runs: list[tuple[dict[str, object], str]] = []

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        self.runs.append((dict(arguments), language))
        if arguments.get("label") == "boom":
            raise RuntimeError("broken tool")
        return ToolResult(f"echo {arguments['seconds']}", "said")


@pytest.mark.parametrize(("arguments", "problem"), [
    ({}, "lacks 'seconds'"),
    ({"seconds": "5"}, "seconds should be integer"),
    ({"seconds": True}, "seconds should be integer"),
    ({"seconds": 0}, "at least 1"),
    ({"seconds": 61}, "at most 60"),
    ({"seconds": 5, "label": "too long"}, "at most 5 characters"),
    ({"seconds": 5, "kind": "alarm"}, "one of 'timer', 'reminder'"),
    ({"seconds": 5, "tags": ["a", 1]}, "tags[1] should be string"),
    ({"seconds": 5, "tags": ["a", "b", "c"]}, "at most 2 items"),
    ({"seconds": 5, "colour": "red"}, "unknown field 'colour'"),
])
def test_a_call_the_schema_refuses_is_not_run(arguments: dict[str, object],
                                              problem: str) -> None:
    tool = Echo()
    result = ToolRegistry([tool]).run(ToolCall("echo", arguments))
    assert not result.ok and problem in result.text
    assert tool.runs == []


def test_a_valid_call_runs_with_its_language() -> None:
    tool = Echo()
    result = ToolRegistry([tool]).run(ToolCall("echo", {"seconds": 5.0, "label": "tea"},
                                               language="ja"))
    assert result == ToolResult("echo 5.0", "said")
    assert tool.runs == [({"seconds": 5.0, "label": "tea"}, "ja")]


def test_an_unknown_tool_a_cancelled_turn_and_a_failing_tool_are_failed_results() -> None:
    tool = Echo()
    registry = ToolRegistry([tool])
    assert "no tool called 'nope'" in registry.run(ToolCall("nope")).text
    cancel = threading.Event()
    cancel.set()
    assert "cancelled" in registry.run(ToolCall("echo", {"seconds": 1}), cancel).text
    broken = registry.run(ToolCall("echo", {"seconds": 1, "label": "boom"}))
    assert not broken.ok and "broken tool" in broken.text


def test_names_must_suit_both_formats_and_be_unique() -> None:
    with pytest.raises(ValueError, match="letters, digits"):
        ToolSpec("set timer", "x", {"type": "object"}, side_effects=False)
    with pytest.raises(ValueError, match="JSON Schema object"):
        ToolSpec("x", "x", {"type": "string"}, side_effects=False)
    with pytest.raises(ValueError, match="two tools"):
        ToolRegistry([Echo(), Echo()])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(json_values)
def test_the_checker_answers_for_any_json(value: object) -> None:
    found = errors(SCHEMA, value)
    assert isinstance(found, list)
    if not isinstance(value, dict):
        assert found == ["arguments should be object"]
