"""Gemma 4's tool format: declarations as its chat template writes them, and calls taken
out of the reply stream so that no part of one is ever spoken."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.tools import gemma4
from app.tools.gemma4 import CallStream, CallSyntaxError, parse_call, split_calls
from app.tools.spec import ToolCall, ToolSpec

Q = '<|"|>'
WEATHER = ToolSpec("weather", "Weather", {"type": "object", "properties": {
    "city": {"type": "string", "description": "City"}}, "required": ["city"]},
    side_effects=False)


def test_a_declaration_is_written_as_the_template_writes_it() -> None:
    # the form Gemma 4's chat template gives an OpenAI function (keys sorted, types in
    # capitals, strings between <|"|> tokens)
    assert gemma4.declaration(WEATHER) == (
        f"<|tool>declaration:weather{{description:{Q}Weather{Q},parameters:{{"
        f"properties:{{city:{{description:{Q}City{Q},type:{Q}STRING{Q}}}}},"
        f"required:[{Q}city{Q}],type:{Q}OBJECT{Q}}}}}<tool|>")


def test_enums_nested_objects_arrays_and_an_empty_schema() -> None:
    spec = ToolSpec("t", "T", {"type": "object", "properties": {
        "unit": {"type": "string", "enum": ["c", "f"]},
        "at": {"type": "object", "properties": {"h": {"type": "integer"}}, "required": ["h"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "maybe": {"type": "boolean", "nullable": True}}}, side_effects=False)
    assert gemma4.declaration(spec) == (
        f"<|tool>declaration:t{{description:{Q}T{Q},parameters:{{properties:{{"
        f"at:{{properties:{{h:{{type:{Q}INTEGER{Q}}}}},required:[{Q}h{Q}],type:{Q}OBJECT{Q}}},"
        f"maybe:{{nullable:true,type:{Q}BOOLEAN{Q}}},"
        f"tags:{{items:{{type:{Q}STRING{Q}}},type:{Q}ARRAY{Q}}},"
        f"unit:{{enum:[{Q}c{Q},{Q}f{Q}],type:{Q}STRING{Q}}}}},type:{Q}OBJECT{Q}}}}}<tool|>")
    empty = ToolSpec("now", "Now", {"type": "object", "properties": {}}, side_effects=False)
    assert gemma4.declaration(empty) == (
        f"<|tool>declaration:now{{description:{Q}Now{Q},parameters:{{type:{Q}OBJECT{Q}}}}}"
        "<tool|>")


def test_a_call_and_a_response_as_the_template_writes_them() -> None:
    call = ToolCall("set_timer", {"seconds": 300, "label": "pasta", "loud": True})
    assert gemma4.call_text(call) == (
        f"<|tool_call>call:set_timer{{label:{Q}pasta{Q},loud:true,seconds:300}}<tool_call|>")
    assert gemma4.response_text("set_timer", "Timer 1 set.") == (
        f"<|tool_response>response:set_timer{{value:{Q}Timer 1 set.{Q}}}<tool_response|>")


@pytest.mark.parametrize(("body", "arguments"), [
    (f"call:weather{{city:{Q}London{Q}}}", {"city": "London"}),
    ('call:weather{city:"Lon\\"don"}', {"city": 'Lon"don'}),
    (f'call:weather{{{Q}city{Q}:{Q}a, b: {{c}}{Q}}}', {"city": "a, b: {c}"}),
    ("call:set_timer{seconds:300, label: null}", {"seconds": 300, "label": None}),
    ("call:x{n:-2.5,e:1e3,flag:false,xs:[1,[2]],o:{k:true}}",
     {"n": -2.5, "e": 1000.0, "flag": False, "xs": [1, [2]], "o": {"k": True}}),
    ("call:list_timers{}", {}),
    (" call: list_timers ", {}),
])
def test_call_bodies_are_read(body: str, arguments: dict[str, object]) -> None:
    call = parse_call(body, language="ja")
    assert call.arguments == arguments and call.language == "ja"


@pytest.mark.parametrize("body", [
    "weather{city:1}", "call:{a:1}", "call:w{city:", f"call:w{{city:{Q}open}}",
    "call:w{city 1}", "call:w{a:1} trailing", "call:w{a:@}"])
def test_broken_bodies_are_refused(body: str) -> None:
    with pytest.raises(CallSyntaxError):
        parse_call(body)


REPLY = (f"Sure, one moment. <|tool_call>call:set_timer{{label:{Q}a <tool_call|> b{Q},"
         f"seconds:300}}<tool_call|><|tool_response>ignored after the call")


def _stream(pieces: list[str]) -> tuple[str, list[ToolCall], CallStream]:
    stream = CallStream()
    spoken, calls = [], []
    for piece in pieces:
        out = stream.feed(piece)
        spoken.append(out.text)
        calls += out.calls
    end = stream.finish()
    return "".join(spoken) + end.text, calls + list(end.calls), stream


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13, len(REPLY)])
def test_a_call_split_anywhere_is_found_and_never_spoken(size: int) -> None:
    spoken, calls, stream = _stream([REPLY[i:i + size] for i in range(0, len(REPLY), size)])
    assert spoken == "Sure, one moment. "
    assert [(c.name, dict(c.arguments)) for c in calls] == [
        ("set_timer", {"label": "a <tool_call|> b", "seconds": 300})]
    assert stream.awaiting


def test_text_that_only_looks_like_a_marker_is_spoken_once_clear() -> None:
    stream = CallStream()
    assert stream.feed("a <|tool").text == "a " and stream.feed("").text == ""
    assert stream.finish().text == "<|tool"  # the reply ended: it was only text
    spoken, calls, _ = _stream(["1 <|tool", " 2 <tool_call|> 3"])
    assert spoken == "1 <|tool 2 <tool_call|> 3" and calls == []


def test_a_call_left_open_is_read_at_the_end_and_a_broken_one_is_reported() -> None:
    stream = CallStream()
    assert stream.feed("<|tool_call>call:list_timers{}").text == ""
    end = stream.finish()
    assert [c.name for c in end.calls] == ["list_timers"] and end.text == ""
    stream = CallStream()
    piece = stream.feed("Hm <|tool_call>call:broken{x:<tool_call|>Done.")
    assert piece.text == "Hm Done." and piece.calls == () and piece.malformed


def test_two_calls_in_a_row() -> None:
    text, calls = split_calls("<|tool_call>call:a{}<tool_call|><|tool_call>call:b{n:1}"
                              "<tool_call|><|tool_response>")
    assert text == "" and [c.name for c in calls] == ["a", "b"]


def test_a_runaway_call_is_dropped_unsaid() -> None:
    stream = CallStream()
    piece = stream.feed("<|tool_call>call:x{a:" + "9" * (gemma4.MAX_CALL_CHARS + 10))
    assert piece.text == "" and piece.malformed and stream.awaiting


plain = st.text().filter(lambda t: "<|tool_call>" not in t and "<|tool_response>" not in t)


@given(plain, st.lists(st.integers(min_value=1, max_value=9), max_size=30))
def test_text_without_calls_passes_unchanged_however_it_is_cut(text: str,
                                                              cuts: list[int]) -> None:
    pieces, at = [], 0
    for size in cuts:
        pieces.append(text[at:at + size])
        at += size
    pieces.append(text[at:])
    spoken, calls, _ = _stream(pieces)
    assert spoken == text and calls == []


keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.text().filter(lambda s: Q not in s),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=10)


@given(st.dictionaries(keys, values, max_size=5))
def test_what_call_text_writes_reads_back(arguments: dict[str, object]) -> None:
    text, calls = split_calls("ok " + gemma4.call_text(ToolCall("tool", arguments)))
    assert text == "ok " and [dict(c.arguments) for c in calls] == [arguments]
