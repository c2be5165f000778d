"""A turn still finishing when the conversation switches is kept with its own conversation."""

from __future__ import annotations

import time

import numpy as np

from app.core.events import TurnCommitted
from app.core.pipeline import Engines, VoicePipeline, _SetSystemPrompt
from app.core.turn import Publish, StartTurn


def test_a_late_commit_stays_out_of_the_new_conversation(fake_engines: Engines) -> None:
    pipeline = VoicePipeline(fake_engines, "You are Hana.")
    pipeline._dispatch(_SetSystemPrompt("You are Hana.", (("hi", "hello"),), "hana-1"))
    pipeline._execute([StartTurn(7, np.zeros(160, dtype=np.float32), held=False)])
    pipeline._dispatch(_SetSystemPrompt("You are Kai.", (("yo", "hey"),), "kai-1"))
    assert pipeline.conversation_key == "kai-1"
    # the machine commits the old turn into whatever conversation it holds now...
    pipeline.machine.conversation.commit("Tell me more", "Sure, Hana here")
    seen: list[object] = []
    pipeline.add_observer(lambda event: seen.append((event, pipeline.key_of(7))))
    pipeline._execute([Publish(TurnCommitted(7, "Tell me more", "Sure, Hana here"))])
    # ...and the pipeline takes it out again; observers still see it under Hana's key
    assert pipeline.machine.conversation.exchanges == [("yo", "hey")]
    assert seen == [(TurnCommitted(7, "Tell me more", "Sure, Hana here"), "hana-1")]


def test_loading_a_conversation_warms_its_whole_prefix(fake_engines: Engines) -> None:
    pipeline = VoicePipeline(fake_engines, "You are Hana.")
    pipeline._dispatch(_SetSystemPrompt("You are Hana.", (("hi", "hello"),), "hana-1"))
    job = pipeline.responder.inbox.get_nowait()
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
