"""Gemma 4's own tool calls through the llama.cpp adapter, on a tiny random-weight
``gemma4`` GGUF whose weights write a call: the declarations reach the system turn through
the model's template, the call's control tokens come through as text (and are never
spoken), the adapter stops at the model's wait for results, and the same turn goes on after
the app's response."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.adapters.llama_llm import LlamaLanguageModel
from app.adapters.sampling import SamplingConfig
from app.core.ports import CallsTools, ChatMessage
from app.core.tool_rounds import reply_with_tools
from app.tools.spec import ToolCall, ToolResult, ToolSpec
from tests.adapters.gguf_builders import GEMMA4_TEMPLATE, write_tiny_gemma4

TEMPLATE = GEMMA4_TEMPLATE.replace(
    "{{ bos_token }}",
    "{{ bos_token }}{% if tools %}{% for t in tools %}"
    "{{ '<|tool>declaration:' + t.function.name + '<tool|>' }}{% endfor %}{% endif %}", 1)
REPLY = ("\u2581Sure", "<|tool_call>", "call:set_timer{seconds:120}", "<tool_call|>",
         "<|tool_response>", "<tool_response|>", "\u2581Done")
SPEC = ToolSpec("set_timer", "Set a timer.", {
    "type": "object", "properties": {"seconds": {"type": "integer"}}, "required": ["seconds"]},
    side_effects=True)
MESSAGES = [ChatMessage("system", "You are Hana."), ChatMessage("user", "Timer, two minutes.")]


@pytest.fixture(scope="module")
def gemma4(tmp_path_factory: pytest.TempPathFactory) -> LlamaLanguageModel:
    path = write_tiny_gemma4(tmp_path_factory.mktemp("g4") / "tools.gguf", reply_tokens=REPLY,
                             template=TEMPLATE)
    return LlamaLanguageModel(Path(path), n_ctx=1024,
                              sampling=SamplingConfig(max_tokens=20, seed=1))


def test_declarations_come_from_the_models_template(gemma4: LlamaLanguageModel) -> None:
    assert isinstance(gemma4, CallsTools)
    assert "<|tool>" not in gemma4.render(MESSAGES)
    assert gemma4.offer_tools([SPEC])
    assert gemma4.render(MESSAGES).count("<|tool>declaration:set_timer<tool|>") == 1
    gemma4.offer_tools([])
    assert "<|tool>" not in gemma4.render(MESSAGES)


def test_a_call_is_run_and_the_turn_goes_on_after_its_response(
        gemma4: LlamaLanguageModel) -> None:
    gemma4.offer_tools([SPEC])
    ran: list[ToolCall] = []

    def run(call: ToolCall, cancel: threading.Event) -> ToolResult:
        ran.append(call)
        return ToolResult("Timer set for 120 seconds.", "Timer set.")

    try:
        said = "".join(reply_with_tools(gemma4, MESSAGES, lambda: False, None, run, "en",
                                        first=gemma4.stream(MESSAGES, lambda: False)))
    finally:
        gemma4.offer_tools([])
    assert [(c.name, c.arguments) for c in ran] == [("set_timer", {"seconds": 120})]
    assert said.split() == ["Sure", "Done"]  # nothing of the call, the response after it
    assert "<" not in said
