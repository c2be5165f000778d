"""Tools with a model on an OpenAI-compatible server: the request carries the tools in
OpenAI's ``tools`` field; a call the server streams as ``tool_calls`` deltas (cut into
pieces, as vLLM and llama-server send them) runs through the app's one tool loop; the next
request sends the call and its result back as an assistant ``tool_calls`` message and a
``tool`` message answering it by id; a server that refuses tools is asked again without."""

from __future__ import annotations

import threading

from app.adapters.openai_llm import OpenAILanguageModel
from app.core.ports import CallsTools, ChatMessage
from app.core.tool_rounds import reply_with_tools
from app.tools.spec import ToolCall, ToolResult, ToolSpec
from tests.support.openai_server import StubRequest, StubServer, llama_chunks

ASK = [ChatMessage("system", "You are Hanasu."),
       ChatMessage("user", "Set a tea timer for four minutes.")]
SET_TIMER = ToolSpec("set_timer", "Starts a countdown.", {
    "type": "object", "properties": {"seconds": {"type": "integer"},
                                     "label": {"type": "string"}},
    "required": ["seconds"]}, side_effects=True)


def _stream_call(request: StubRequest) -> None:
    """Two words, then ``set_timer`` in three deltas, ending with finish_reason
    tool_calls."""
    request.start_stream()
    deltas: list[dict[str, object]] = [
        {"content": "Sure,"},
        {"tool_calls": [{"index": 0, "id": "call_abc", "type": "function",
                         "function": {"name": "set_timer", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"seconds": 24'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '0, "label": "tea"}'}}]},
    ]
    for delta in deltas:
        request.event({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    request.event({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    request.event("[DONE]")
    request.end_stream()


def _server(request: StubRequest) -> None:
    if any(m.get("role") == "tool" for m in request.body.get("messages", [])):
        llama_chunks(request, [" your", " tea timer", " is running."])
    else:
        _stream_call(request)


def test_a_streamed_call_runs_and_its_result_goes_back_by_id() -> None:
    ran: list[ToolCall] = []

    def run(call: ToolCall, cancel: threading.Event) -> ToolResult:
        ran.append(call)
        return ToolResult("Timer 7 set: tea, 240 s.", "Timer set.")

    with StubServer(_server) as stub:
        llm = OpenAILanguageModel(stub.url, "gemma-4")
        assert isinstance(llm, CallsTools)
        assert llm.offer_tools([SET_TIMER])
        said = "".join(reply_with_tools(llm, ASK, lambda: False, None, run, "en"))
        first, second = stub.chat_bodies()
    assert said == "Sure, your tea timer is running."
    assert [(c.name, dict(c.arguments)) for c in ran] == [
        ("set_timer", {"label": "tea", "seconds": 240})]
    assert first["tools"] == second["tools"] == [{"type": "function", "function": {
        "name": "set_timer", "description": "Starts a countdown.",
        "parameters": dict(SET_TIMER.parameters)}}]
    assistant, tool = second["messages"][-2:]
    assert second["messages"][:-2] == first["messages"]
    assert assistant["role"] == "assistant" and assistant["content"] == "Sure,"
    [made] = assistant["tool_calls"]
    assert made["function"]["name"] == "set_timer"
    assert tool == {"role": "tool", "tool_call_id": made["id"], "name": "set_timer",
                    "content": "Timer 7 set: tea, 240 s."}


def test_a_server_that_refuses_tools_is_asked_again_without_them() -> None:
    def no_tools(request: StubRequest) -> None:
        if "tools" in request.body:
            request.json(400, {"error": {"message": "tools param requires --jinja flag"}})
        else:
            llama_chunks(request, ["Four", " minutes,", " got it."])

    with StubServer(no_tools) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        llm.offer_tools([SET_TIMER])
        assert "".join(llm.stream(ASK, lambda: False)) == "Four minutes, got it."
        assert "".join(llm.stream(ASK, lambda: False)) == "Four minutes, got it."
        assert ["tools" in body for body in stub.chat_bodies()] == [True, False, False]


def test_no_tools_offered_sends_no_tools_field() -> None:
    with StubServer(lambda r: llama_chunks(r, ["Hi"])) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        assert list(llm.stream(ASK, lambda: False)) == ["Hi"]
        llm.offer_tools([])
        list(llm.stream(ASK, lambda: False))
        assert all("tools" not in body for body in stub.chat_bodies())
