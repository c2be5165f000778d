"""The idle-time memory extraction on a real pipeline with the fake engines: it stores a
fact after an exchange once the app is idle, the user speaking cancels it (nothing is
stored), a reply always goes first, and junk never becomes a memory."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.events import PipelineEvent, SpeechStarted, TurnCommitted, TurnStarted
from app.core.memory_extraction import INSTRUCTION, MemoryExtractor
from app.core.pipeline import Engines, VoicePipeline
from app.core.ports import ChatMessage, PromptStats
from app.core.stage_jobs import ExtractJob
from app.core.stages import Responder
from app.core.worker import LiveTurn
from app.storage.database import open_database
from app.storage.extraction import fact_store
from app.storage.keeper import Keeper, attach
from tests.pipeline.conftest import silence, voiced

BLOCK = 512
SISTER = "My sister is called Mei."
FACT = "The user's sister is called Mei."


def _extracting(messages: Sequence[ChatMessage]) -> bool:
    return bool(messages) and messages[-1].content == INSTRUCTION


class _Model(FakeLanguageModel):
    """The fake LLM, writing a log of what it did; extraction passes are slow, so a
    test can talk over one."""

    def __init__(self, reply: str, extraction: str, extract_delay_s: float = 0.0) -> None:
        super().__init__(reply)
        self.extraction, self.extract_delay_s = extraction, extract_delay_s
        self.log: list[str] = []
        self.extracting = threading.Event()
        self.ended_at: list[float] = []

    def stream(self, messages: Sequence[ChatMessage], cancelled: Callable[[], bool],
               on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        if not _extracting(messages):
            self.log.append("reply")
            yield from super().stream(messages, cancelled, on_prompt)
            return
        self.prompts.append(list(messages))
        self.log.append("extract")
        self.extracting.set()
        words = self.extraction.split(" ")
        sent = 0
        for word in words:
            if cancelled():
                break
            time.sleep(self.extract_delay_s)
            sent += 1
            yield word if sent == 1 else " " + word
        self.log.append(f"extract-end {sent}/{len(words)}")
        self.ended_at.append(time.monotonic())


class _Rig:
    def __init__(self, tmp_path: Path, model: _Model, transcripts: Sequence[str]) -> None:
        self.model = model
        engines = Engines(FakeVoiceActivity(), FakeRecognizer(transcripts), model,
                          FakeSynthesizer(seconds_per_char=0.01))
        self.keeper = Keeper(open_database(tmp_path / "hanasu.db"))
        self.pipeline = VoicePipeline(engines, "You are Hana.")
        self.events: list[PipelineEvent] = []
        self.seen_at: list[float] = []
        self.pipeline.add_observer(self._seen)
        attach(self.keeper, self.pipeline, "hana", "You are Hana.")
        self.extractor = MemoryExtractor(self.pipeline, fact_store(self.keeper), settle_s=0.2)
        self.pipeline.add_observer(self.extractor.observe)
        self.pipeline.start()

    def run_until(self, condition: Callable[[], bool], mic: np.ndarray | None = None,
                  timeout: float = 10.0) -> None:
        """Play the speaker and feed ``mic`` (then silence) until ``condition()``."""
        deadline, position = time.monotonic() + timeout, 0
        while not condition():
            assert time.monotonic() < deadline, "timed out"
            self.pipeline.pull_audio(BLOCK)
            if mic is not None and position < mic.size:
                self.pipeline.push_audio(mic[position:position + BLOCK])
                position += BLOCK
            else:
                self.pipeline.push_audio(np.zeros(BLOCK, np.float32))
            time.sleep(BLOCK / 16_000 / 4)

    def _seen(self, event: PipelineEvent) -> None:
        self.seen_at.append(time.monotonic())
        self.events.append(event)

    def commits(self) -> int:
        return sum(isinstance(e, TurnCommitted) for e in self.events)

    def memories(self) -> list[str]:
        self.keeper.flush()
        return [m.text for m in self.keeper.memories.all("hana")]

    def close(self) -> None:
        self.extractor.stop()
        self.pipeline.stop()
        self.keeper.close()


def _utterance() -> np.ndarray:
    return np.concatenate([voiced(0.8), silence(1.2)])


@pytest.fixture
def rigs(tmp_path: Path) -> Iterator[list[_Rig]]:
    made: list[_Rig] = []
    yield made
    for rig in made:
        rig.close()


def test_a_fact_is_stored_after_an_idle_exchange(tmp_path: Path, rigs: list[_Rig]) -> None:
    rig = _Rig(tmp_path, _Model("How lovely, tell me about her.", f"- {FACT}\n"), [SISTER])
    rigs.append(rig)
    rig.run_until(lambda: rig.commits() == 1, mic=_utterance())
    rig.run_until(lambda: rig.extractor.passes == 1)
    assert rig.memories() == [FACT.rstrip(".")]  # stored like every memory
    # the pass saw the conversation, exchange included, with the instruction last
    # (the same prefix as the replies, so llama.cpp's cache stays warm)
    [prompt] = [p for p in rig.model.prompts if _extracting(p)]
    assert [m.content for m in prompt[:3]] == ["You are Hana.", SISTER,
                                               "How lovely, tell me about her."]
    # nothing of it was spoken or kept in the conversation
    assert rig.pipeline.machine.conversation.exchanges == [
        (SISTER, "How lovely, tell me about her.")]
    assert rig.model.log == ["reply", "extract", "extract-end 7/7"]  # "- The user's..."


def test_a_pass_is_counted_only_once_its_facts_are_handed_on(
        tmp_path: Path, rigs: list[_Rig]) -> None:
    """Whoever waits for ``passes`` and then flushes the keeper finds the facts written
    (CI once saw the count first and an empty memory list)."""
    rig = _Rig(tmp_path, _Model("How lovely.", f"- {FACT}\n"), [SISTER])
    rigs.append(rig)
    counted_at_store: list[int] = []
    handed_on = rig.extractor.store

    def store(key: object, facts: list[str]) -> None:
        counted_at_store.append(rig.extractor.passes)
        time.sleep(0.2)  # a slow hand-over: the count must wait for it
        handed_on(key, facts)

    rig.extractor.store = store
    rig.run_until(lambda: rig.commits() == 1, mic=_utterance())
    rig.run_until(lambda: rig.extractor.passes == 1)
    assert counted_at_store == [0]
    assert rig.memories() == [FACT.rstrip(".")]


def test_speech_cancels_the_pass_and_the_reply_goes_first(
        tmp_path: Path, rigs: list[_Rig]) -> None:
    model = _Model("How lovely.", FACT + " " + "and so on " * 40, extract_delay_s=0.02)
    rig = _Rig(tmp_path, model, [SISTER, "Tell me a joke."])
    rigs.append(rig)
    rig.run_until(lambda: rig.commits() == 1, mic=_utterance())
    rig.run_until(model.extracting.is_set)
    speech_at = len(rig.events)
    rig.run_until(lambda: rig.commits() == 2, mic=_utterance())  # the user talks over it
    rig.run_until(lambda: rig.pipeline.is_idle() and rig.extractor.passes
                  + rig.extractor.cancelled >= 2)
    # it stopped at the user's first words, before their turn even started
    later = list(zip(rig.events[speech_at:], rig.seen_at[speech_at:], strict=True))
    started = next(at for e, at in later if isinstance(e, SpeechStarted))
    turn = next(at for e, at in later if isinstance(e, TurnStarted))
    assert started - 0.1 < model.ended_at[0] < turn
    # the first pass was cut short and handed nothing on; the reply came only after it
    first_end = next(x for x in model.log if x.startswith("extract-end"))
    done, total = map(int, first_end.split()[1].split("/"))
    assert done < total
    assert model.log[:4] == ["reply", "extract", first_end, "reply"]
    assert rig.extractor.cancelled >= 1
    # the second exchange's pass ran, but "Tell me a joke." states no fact: none stored
    assert rig.memories() == []


def test_junk_from_the_model_is_never_stored(tmp_path: Path, rigs: list[_Rig]) -> None:
    junk = ("Sure! Here are the facts:\nWhat is your sister's name?\nI am an AI assistant.\n"
            "The weather is nice today.\nThe user likes pizza.\nNONE")
    rig = _Rig(tmp_path, _Model("Nice.", junk), [SISTER])
    rigs.append(rig)
    rig.run_until(lambda: rig.commits() == 1, mic=_utterance())
    rig.run_until(lambda: rig.extractor.passes == 1)
    assert rig.memories() == []


def test_a_fact_already_remembered_is_not_stored_again(
        tmp_path: Path, rigs: list[_Rig]) -> None:
    rig = _Rig(tmp_path, _Model("Nice.", FACT), [SISTER])
    rigs.append(rig)
    rig.keeper.memories.add("hana", "My sister is called Mei")
    rig.run_until(lambda: rig.commits() == 1, mic=_utterance())
    rig.run_until(lambda: rig.extractor.passes == 1)
    assert rig.memories() == ["My sister is called Mei"]


def test_a_queued_pass_is_skipped_when_a_turn_started_after_it() -> None:
    """The Responder never starts a pass behind which a reply waits: the pipeline bumps
    the live turn's activity at each StartTurn and SpeechStarted."""
    model = FakeLanguageModel(FACT)
    live = LiveTurn()
    responder = Responder(lambda event: None, model, live, _Clock(), _Inbox().put)
    results: list[str | None] = []
    queued = ExtractJob([ChatMessage("user", INSTRUCTION)], live.activity, results.append)
    live.activity += 1  # a turn started while the pass was queued
    responder.handle(queued)
    responder.handle(ExtractJob([ChatMessage("user", INSTRUCTION)], live.activity,
                                results.append))
    assert results == [None, FACT]
    assert len(model.prompts) == 1


class _Clock:
    def now(self) -> float:
        return 0.0


class _Inbox:
    def put(self, item: object) -> None:
        raise AssertionError("an extraction pass must not reach the synthesizer")


