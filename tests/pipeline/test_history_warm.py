"""After each exchange the model evaluates the history while nobody talks, so the next
turn evaluates only the user's words."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.cli.file_session import run_file
from app.core.events import PipelineEvent
from app.core.pipeline import Engines
from app.core.ports import ChatMessage, PromptStats
from app.core.stage_jobs import WarmJob
from app.core.stages import Responder
from app.core.turn_commands import Respond
from app.core.worker import LiveTurn
from app.personas import load_personas
from tests.pipeline.conftest import silence, voiced


class _Clock:
    def now(self) -> float:
        return 1.0


class ServerModel(FakeLanguageModel):
    """A model behind a server: warmed when the persona loads, not between turns."""

    def __init__(self) -> None:
        super().__init__("Tea is lovely. Green tea especially.")
        self.warmed: list[list[ChatMessage]] = []

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        self.warmed.append(list(messages))
        return super().warm(messages)


class WarmRecorder(FakeLanguageModel):
    """A model run in this process, from its own file (``HasModelFile``)."""

    model_path = Path("models/fake.gguf")

    def __init__(self, fail: bool = False) -> None:
        super().__init__("Tea is lovely. Green tea especially.")
        self.warmed: list[list[ChatMessage]] = []
        self.fail = fail

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        self.warmed.append(list(messages))
        if self.fail:
            raise ConnectionError("cannot connect")
        return super().warm(messages)


def test_each_exchange_is_warmed_into_the_cache_before_the_next_request() -> None:
    llm = WarmRecorder()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(["Do you like tea?", "And coffee?"]),
                      llm, FakeSynthesizer())
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(6.0), voiced(0.8), silence(4.0)])
    result = run_file(engines, load_personas().default, audio)
    assert [turn.transcript for turn in result.turns] == ["Do you like tea?", "And coffee?"]
    after_first = [m for m in llm.warmed if any(x.content == "Do you like tea?" for x in m)]
    assert after_first, "the first exchange was never warmed"
    warmed = after_first[0]
    assert [m.role for m in warmed[-2:]] == ["user", "assistant"]  # ends with the reply heard
    assert warmed[-1].content.startswith("Tea is lovely.")
    # the second request's prompt is that history plus its own words: all of it was cached
    second = result.turns[1]
    assert second.prompt_tokens is not None and second.reused_tokens is not None
    new = second.prompt_tokens - second.reused_tokens
    assert new <= len("<user>And coffee?</user>")


def test_a_server_is_not_sent_an_extra_request_between_turns() -> None:
    llm = ServerModel()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(["Do you like tea?"]), llm,
                      FakeSynthesizer())
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(6.0)])
    result = run_file(engines, load_personas().default, audio)
    assert [turn.transcript for turn in result.turns] == ["Do you like tea?"]
    assert result.turns[0].heard_text
    assert not [m for m in llm.warmed if any(x.content == "Do you like tea?" for x in m)]


def test_a_warm_after_a_reply_is_dropped_when_a_turn_waits_behind_it() -> None:
    llm = WarmRecorder()
    responder = Responder([].append, llm, LiveTurn(), _Clock(), lambda job: None)
    responder.inbox.put(Respond(1, [ChatMessage("user", "hi")]))
    responder.handle(WarmJob([ChatMessage("system", "You are Hana.")], after_reply=True))
    assert llm.warmed == []
    responder.inbox.get_nowait()
    responder.handle(WarmJob([ChatMessage("system", "You are Hana.")], after_reply=True))
    assert len(llm.warmed) == 1


def test_a_failed_warm_after_a_reply_is_only_logged() -> None:
    events: list[PipelineEvent] = []
    responder = Responder(events.append, WarmRecorder(fail=True), LiveTurn(), _Clock(),
                          lambda job: None)
    responder.handle(WarmJob([ChatMessage("system", "You are Hana.")], after_reply=True))
    assert events == []  # no error shown between turns: the next turn tries and says so
