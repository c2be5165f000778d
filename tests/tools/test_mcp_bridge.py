"""A server's listing and answers as the app's tools and results: names fit the model's
formats, junk schemas are left out with a reason, junk answers never reach the voice."""

from __future__ import annotations

import threading

import pytest
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
)

from app.tools.mcp_bridge import (
    MAX_RESULT_CHARS,
    McpTool,
    Offered,
    answer,
    offered_tools,
    schema_problem,
    tool_name,
)
from app.tools.spec import Arguments, ToolResult

OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def listed(name: str, schema: dict[str, object] = OBJECT, read_only: bool | None = None,
           description: str | None = "Look it up.") -> Tool:
    notes = None if read_only is None else ToolAnnotations(read_only_hint=read_only)
    return Tool(name=name, description=description, input_schema=schema, annotations=notes)


def test_names_are_namespaced_sanitised_capped_and_unique() -> None:
    taken: set[str] = set()
    assert tool_name("files", "read-file.v2", taken) == "files__read_file_v2"
    assert tool_name("files", "read file v2", taken) == "files__read_file_v2_2"
    long = tool_name("files", "x" * 100, taken)
    assert len(long) == 64 and long.startswith("files__x")
    assert tool_name("files", "検索", taken) == "files__tool"


@pytest.mark.parametrize(("schema", "why"), [
    ({"type": "string"}, "does not describe an object"),
    ({"type": "object", "properties": ["q"]}, "properties"),
    ({"type": "object", "required": "q"}, "required"),
    ({"type": "object", "properties": {"q": {"type": "string", "default": "x" * 9000}}},
     "too big"),
    ({"type": "object", "properties": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {}}}}}}}}}},
     "nested too deep"),
])
def test_junk_schemas_are_left_out_with_a_reason(schema: dict[str, object], why: str) -> None:
    assert why in (schema_problem(schema) or "")
    got = offered_tools("Files", "files", [listed("bad", schema), listed("good")])
    assert [o.spec.name for o in got.tools] == ["files__good"]
    [line] = got.dropped
    assert "'bad'" in line and why in line


def test_side_effects_unless_the_server_says_read_only() -> None:
    got = offered_tools("F", "f", [listed("ro", read_only=True), listed("rw", read_only=False),
                                   listed("unknown")])
    assert [o.spec.side_effects for o in got.tools] == [False, True, True]


def test_descriptions_lose_control_characters_and_are_capped() -> None:
    noisy = listed("t", description="Bad\x1b[31m\u202e" + "y" * 900)
    [offered] = offered_tools("F", "f", [noisy]).tools
    assert offered.spec.description.startswith("Bad[31m") and len(offered.spec.description) == 600


def offered_one() -> Offered:
    return offered_tools("Files", "files", [listed("find")]).tools[0]


def test_text_passes_images_are_named_resources_give_their_text() -> None:
    result = CallToolResult(content=[
        TextContent(text="Found it."), ImageContent(data="AA==", mime_type="image/png"),
        EmbeddedResource(resource=TextResourceContents(uri="file:///a", text="inside"))])
    got = answer(result, offered_one(), "en")
    assert got.result.ok and got.fault is None
    assert got.result.text == "Found it.\n[an image]\ninside"


def test_structured_content_stands_in_for_missing_text() -> None:
    got = answer(CallToolResult(content=[], structured_content={"t": 21}), offered_one(), "en")
    assert got.result.ok and got.result.text == '{"t": 21}'


def test_an_error_or_nothing_usable_is_an_apology() -> None:
    error = answer(CallToolResult(content=[TextContent(text="no such file")], is_error=True),
                   offered_one(), "ja")
    assert not error.result.ok and "no such file" in error.result.text
    assert error.result.spoken == "すみません、Filesのツールが今は使えません。"
    empty = answer(CallToolResult(content=[]), offered_one(), "en")
    assert not empty.result.ok and empty.fault is not None


def test_huge_text_is_capped() -> None:
    got = answer(CallToolResult(content=[TextContent(text="w" * 100_000)]), offered_one(), "en")
    assert got.result.ok and len(got.result.text) < MAX_RESULT_CHARS + 80
    assert got.result.text.endswith("(cut: the answer had 100000 characters)")


def test_an_mcp_tool_runs_through_its_call() -> None:
    seen: list[tuple[str, dict[str, object], str]] = []

    def call(offered: Offered, arguments: Arguments, cancel: threading.Event,
             language: str) -> ToolResult:
        seen.append((offered.remote, dict(arguments), language))
        return ToolResult("ok", "ok")

    tool = McpTool(offered_one(), call)
    assert tool.run({"q": "x"}, threading.Event(), "zh").ok
    assert seen == [("find", {"q": "x"}, "zh")]
