"""A question an MCP tool answers, in a live conversation: the model (scripted, writing
Gemma 4's calls) is offered the user's ticked tools from a real stdio MCP server, calls
one, and its spoken and saved reply carries the server's answer. A server that crashes
mid-call gives an apology the user hears, and the conversation goes on."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from app.adapters.fakes import FakeRecognizer, FakeSynthesizer, FakeVoiceActivity
from app.cli.file_session import run_file
from app.core.pipeline import Engines
from app.core.ports import ChatMessage, PromptStats
from app.personas import Persona
from app.storage.database import open_database
from app.storage.keeper import Keeper
from app.tools.gemma4 import CALL_CLOSE, CALL_OPEN, Q
from app.tools.mcp_config import McpToolChoice
from app.tools.spec import ToolSpec
from tests.pipeline.conftest import silence, voiced
from tests.tools.mcp_support import Faults, atlas, running_hub

ASKED = "What's the capital of Kenya, do you know?"
_RESPONSE = re.compile(r"response:(\w+)\{value:" + re.escape(Q) + r"(.*?)" + re.escape(Q),
                       re.DOTALL)


class ScriptedGemma:
    """Calls ``tool`` as Gemma 4 writes a call, then says what the tool answered."""

    def __init__(self, tool: str, arguments: str) -> None:
        self.tool, self.arguments = tool, arguments
        self.offered: tuple[str, ...] = ()
        self.responses: list[tuple[str, str]] = []

    def offer_tools(self, specs: Sequence[ToolSpec]) -> bool:
        self.offered = tuple(s.name for s in specs)
        return True

    def stream(self, messages: Sequence[ChatMessage], cancelled: Callable[[], bool],
               on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        if on_prompt is not None:
            on_prompt(PromptStats(100, 90))
        yield from ["Let me look.", " ", CALL_OPEN, f"call:{self.tool}{{",
                    self.arguments, "}", CALL_CLOSE]

    def stream_after(self, messages: Sequence[ChatMessage], written: str,
                     cancelled: Callable[[], bool],
                     on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        self.responses = _RESPONSE.findall(written)
        [(_, value)] = self.responses
        if value.startswith(("Sorry", "atlas__")) or "failed" in value:
            yield from [value.split('Tell the user: "')[-1].rstrip('"')]
        else:
            yield from ["It's", f" {value}."]

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        return PromptStats(100, 0)


def converse(tmp_path: Path, persona: Persona, llm: ScriptedGemma,
             faults: Faults) -> tuple[str, list[str], list[str]]:
    """One spoken question through the app's pipeline with the MCP hub attached: what was
    said, what was kept, and the run's failures."""
    tts = FakeSynthesizer()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer([ASKED]), llm, tts)  # type: ignore[arg-type]
    audio = np.concatenate([silence(0.5), voiced(1.2), silence(5.0)])
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    server = atlas(tmp_path / "events.txt", ticked=("capital_of", "crash"))
    # crash() says nothing of side effects, so it would ask first: the user allowed it
    server = server.model_copy(update={"tools": {
        **server.tools, "crash": McpToolChoice(enabled=True, always_allow=True)}})
    with running_hub(server, on_fault=faults) as hub:
        try:
            result = run_file(engines, persona, audio, keeper=keeper, max_wait_s=15, mcp=hub)
            _, exchanges = keeper.resume(persona.id)
        finally:
            keeper.close()
    return " ".join(tts.texts), [e.heard_text for e in exchanges], result.failures


def test_the_model_asks_an_mcp_tool_and_says_its_answer(tmp_path: Path,
                                                        persona: Persona) -> None:
    llm, faults = ScriptedGemma("atlas__capital_of", f"country:{Q}Kenya{Q}"), Faults()
    spoken, kept, failures = converse(tmp_path, persona, llm, faults)
    assert "atlas__capital_of" in llm.offered and "set_timer" in llm.offered  # beside them
    assert "atlas__junk" not in llm.offered  # not ticked: never offered
    assert llm.responses == [("atlas__capital_of", "Nairobi")]
    assert "It's Nairobi." in spoken and "call:" not in spoken
    assert kept == ["Let me look. It's Nairobi."]
    assert not failures and not faults.seen


def test_a_server_that_crashes_mid_call_gets_an_apology_heard(tmp_path: Path,
                                                              persona: Persona) -> None:
    llm, faults = ScriptedGemma("atlas__crash", ""), Faults()
    spoken, kept, failures = converse(tmp_path, persona, llm, faults)
    assert "Sorry, the Atlas tool isn't working right now." in spoken
    assert kept == ["Let me look. Sorry, the Atlas tool isn't working right now."]
    [(server, message)] = faults.seen
    assert server == "Atlas" and "stopped" in message
    assert not failures  # the conversation went on
