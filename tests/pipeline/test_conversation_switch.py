"""A turn still finishing when the conversation switches is kept with its own conversation."""

from __future__ import annotations

import time

import numpy as np

from app.core.events import (
    PlaybackEnded,
    SpeechStarted,
    Transcript,
    TurnCommitted,
    UtteranceEnded,
)
from app.core.pipeline import Engines, VoicePipeline
from app.core.runtime.messages import LoadConversation
from app.core.stage_jobs import WarmJob


def test_a_late_commit_stays_out_of_the_new_conversation(fake_engines: Engines) -> None:
    """A turn still playing when the user switches persona is committed into the
    conversation it started in, under its key; the new conversation never holds it."""
    pipeline = VoicePipeline(fake_engines, "You are Hana.")
    controller = pipeline.controller
    controller.handle(LoadConversation("You are Hana.", (("hi", "hello"),), "hana-1"))
    hana = pipeline.machine.conversation
    at = 1.0
    audio = np.zeros(1600, dtype=np.float32)
    controller.handle(SpeechStarted(at=at, speech_start=at))
    controller.handle(UtteranceEnded(at=at + 1, audio=audio, speech_start=at,
                                     speech_end=at + 0.9))
    turn = pipeline.machine.live_turn_id
    assert turn is not None
    controller.handle(Transcript(turn, "Tell me more", at + 1.2))
    controller.handle(LoadConversation("You are Kai.", (("yo", "hey"),), "kai-1"))
    assert pipeline.controller.history.key == "kai-1"
    seen: list[object] = []
    pipeline.add_observer(seen.append)
    controller.handle(PlaybackEnded(turn, "Sure, Hana here", False, at + 3, 1.0))
    pipeline.telemetry.drain()
    assert pipeline.machine.conversation.exchanges == [("yo", "hey")]
    assert hana.exchanges == [("hi", "hello"), ("Tell me more", "Sure, Hana here")]
    committed = [e for e in seen if isinstance(e, TurnCommitted)]
    assert committed == [TurnCommitted(turn, "Tell me more", "Sure, Hana here", "hana-1")]


def test_loading_a_conversation_warms_its_whole_prefix(fake_engines: Engines) -> None:
    pipeline = VoicePipeline(fake_engines, "You are Hana.")
    pipeline.controller.handle(LoadConversation("You are Hana.", (("hi", "hello"),), "hana-1"))
    job = pipeline.responder.inbox.get_nowait()
    assert isinstance(job, WarmJob)
    assert [m.content for m in job.messages] == ["You are Hana.", "hi", "hello"]


def test_a_conversation_loaded_before_start_is_warmed_last(fake_engines: Engines) -> None:
    """Its history must be what the cache holds when the user first speaks."""
    warmed: list[int] = []
    llm = fake_engines.llm
    original = llm.warm

    def record(messages):  # type: ignore[no-untyped-def]
        warmed.append(len(messages))
        return original(messages)

    llm.warm = record  # type: ignore[method-assign]
    for _ in range(20):  # the order used to depend on thread timing
        warmed.clear()
        pipeline = VoicePipeline(fake_engines, "You are Hana.")
        pipeline.load_conversation("You are Hana.", [("hi", "hello"), ("how", "fine")], "k")
        pipeline.start()
        deadline = time.monotonic() + 5
        while len(warmed) < 2 and time.monotonic() < deadline:
            time.sleep(0.001)
        pipeline.stop()
        assert warmed == [1, 5]
