"""The model's own tool calls in a live conversation: a request the rules do not know is
left to a model that calls tools in Gemma 4's format (a scripted one here); its call sets a
real timer in the app's database, nothing of the call is spoken or kept, and the model's
words after the tool's response are."""

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
from app.storage.reminders import ReminderStore
from app.tools.gemma4 import CALL_CLOSE, CALL_OPEN
from app.tools.spec import ToolSpec
from tests.pipeline.conftest import silence, voiced

ASKED = "Could you keep an eye on the clock for my tea, say about four minutes?"


class ScriptedGemma:
    """Calls ``set_timer`` the way Gemma 4 writes it, then talks about the result."""

    def __init__(self) -> None:
        self.offered: tuple[str, ...] = ()
        self.continued: list[str] = []

    def offer_tools(self, specs: Sequence[ToolSpec]) -> bool:
        self.offered = tuple(s.name for s in specs)
        return True

    def stream(self, messages: Sequence[ChatMessage], cancelled: Callable[[], bool],
               on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        if on_prompt is not None:
            on_prompt(PromptStats(100, 90))
        yield from ["Of course!", " ", CALL_OPEN, "call:set_timer{label:",
                    '<|"|>tea<|"|>,seconds:240}', CALL_CLOSE]

    def stream_after(self, messages: Sequence[ChatMessage], written: str,
                     cancelled: Callable[[], bool],
                     on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        self.continued.append(written)
        yield from ["I'll", " tell you", " when your tea", " is ready."]

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        return PromptStats(100, 0)


def test_a_call_in_the_models_own_format_sets_a_real_timer(
        tmp_path: Path, persona: Persona) -> None:
    llm = ScriptedGemma()
    tts = FakeSynthesizer()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer([ASKED]), llm, tts)  # type: ignore[arg-type]
    audio = np.concatenate([silence(0.5), voiced(1.2), silence(5.0)])
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    try:
        result = run_file(engines, persona, audio, keeper=keeper, max_wait_s=15)
        [timer] = ReminderStore(keeper.db).pending()
        _, exchanges = keeper.resume(persona.id)
    finally:
        keeper.close()
    assert "set_timer" in llm.offered
    assert (timer.kind, timer.label, timer.duration_s) == ("timer", "tea", 240.0)
    [written] = llm.continued
    assert "response:set_timer{value:" in written
    spoken = " ".join(tts.texts)
    assert "Of course!" in spoken and "when your tea is ready" in spoken
    assert "call:" not in spoken and "<|" not in spoken
    [exchange] = exchanges
    assert exchange.heard_text == "Of course! I'll tell you when your tea is ready."
    assert not result.failures
