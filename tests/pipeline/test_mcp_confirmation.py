"""A user's tool that changes something asks first, in a live conversation with a real
stdio MCP server: the model (scripted, writing Gemma 4's calls) calls ``add_event``; the
call is not run, the model is told to ask and asks; the user's spoken "yes" lets its next
call through and the event is written by the server; a "no" leaves nothing written and
gets "Okay, I won't." without asking the model. The window is told of each question."""

from __future__ import annotations

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
from app.tools.spec import ToolSpec
from tests.pipeline.conftest import silence, voiced
from tests.tools.mcp_support import atlas, running_hub

ASKED = "Put the dentist on Tuesday in my calendar."
CALL = [CALL_OPEN, "call:atlas__add_event{", f"day:{Q}Tuesday{Q},title:{Q}Dentist{Q}", "}",
        CALL_CLOSE]


class CalendarGemma:
    """What Gemma 4 does with a tool that must ask: calls it, reads that it must ask
    first and asks; after the user's yes, calls it again and says what it did."""

    def __init__(self) -> None:
        self.responses: list[str] = []
        self.prompts: list[str] = []

    def offer_tools(self, specs: Sequence[ToolSpec]) -> bool:
        return True

    def stream(self, messages: Sequence[ChatMessage], cancelled: Callable[[], bool],
               on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        self.prompts.append(messages[-1].content)
        yield from CALL

    def stream_after(self, messages: Sequence[ChatMessage], written: str,
                     cancelled: Callable[[], bool],
                     on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        response = written.rsplit("{value:" + Q, 1)[1].split(Q)[0]
        self.responses.append(response)
        if "NOT run yet" in response:
            yield from ["Shall I add", " the dentist on Tuesday", " to your calendar?"]
        else:
            yield from ["Done:", f" {response}"]

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        return PromptStats(100, 0)


def _converse(tmp_path: Path, persona: Persona, answer: str,
              ) -> tuple[CalendarGemma, FakeSynthesizer, list[str], list[object]]:
    llm, tts = CalendarGemma(), FakeSynthesizer()
    said = [ASKED, answer]
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(said), llm, tts)
    audio = np.concatenate([silence(0.5), voiced(1.2), silence(4.0), voiced(0.6),
                            silence(4.0)])
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    events = tmp_path / "events.txt"
    asked: list[object] = []
    with running_hub(atlas(events, ticked=("add_event",))) as hub:
        try:
            run_file(engines, persona, audio, keeper=keeper, max_wait_s=20, mcp=hub,
                     on_question=asked.append)
            _, exchanges = keeper.resume(persona.id)
        finally:
            keeper.close()
    written = events.read_text(encoding="utf-8").splitlines() if events.exists() else []
    return llm, tts, [*written, *(e.heard_text for e in exchanges)], asked


def test_a_spoken_yes_lets_the_call_through(tmp_path: Path, persona: Persona) -> None:
    llm, _, result, asked = _converse(tmp_path, persona, "Yes please.")
    written, first, second = result
    assert written == "Tuesday: Dentist"  # the server did it, once
    assert first == "Shall I add the dentist on Tuesday to your calendar?"
    assert second == "Done: Added Dentist on Tuesday."
    assert "NOT run yet" in llm.responses[0] and len(asked) == 1
    assert llm.prompts[-1] == "Yes please."  # the model heard the yes and called again


def test_a_spoken_no_leaves_nothing_done(tmp_path: Path, persona: Persona) -> None:
    llm, tts, result, _ = _converse(tmp_path, persona, "No thanks.")
    first, second = result
    assert first == "Shall I add the dentist on Tuesday to your calendar?"
    assert second == "Okay, I won't."
    assert len(llm.prompts) == 1  # the no was answered without the model
    assert "Okay, I won't." in tts.texts
