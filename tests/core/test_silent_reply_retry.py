"""A reply with nothing to say aloud (every sentence out of character) is generated once
more, so the user who asked hears an answer instead of silence; a reply that said
something in character is never regenerated."""

from __future__ import annotations

import queue
from collections.abc import Iterator

from app.adapters.fakes import FakeLanguageModel
from app.core.events import PipelineEvent, ReplyChunk, ReplyFinished
from app.core.ports import ChatMessage
from app.core.stage_jobs import EndOfReply
from app.core.stages import Responder
from app.core.synthesizer import SynthesizerJob
from app.core.turn_commands import Respond
from app.core.worker import LiveTurn


def _scripted(*replies: str) -> FakeLanguageModel:
    """Answers each call with the next reply, word by word."""
    return FakeLanguageModel(replies)


class _Clock:
    def now(self) -> float:
        return 0.0


def _answer(model: FakeLanguageModel, cancel_after_first: bool = False) -> list[PipelineEvent]:
    events: list[PipelineEvent] = []
    live = LiveTurn()
    live.turn_id = 1
    inbox: queue.Queue[SynthesizerJob] = queue.Queue()

    def publish(event: PipelineEvent) -> None:
        events.append(event)

    responder = Responder(publish, model, live, _Clock(), inbox.put)  # type: ignore[arg-type]
    if cancel_after_first:
        original = model.stream

        def stream_then_cancel(*args: object, **kwargs: object) -> Iterator[str]:
            yield from original(*args, **kwargs)  # type: ignore[arg-type]
            live.turn_id = 2  # the user spoke again: turn 1 is over

        model.stream = stream_then_cancel  # type: ignore[method-assign]
    responder.handle(Respond(1, [ChatMessage("user", "Who are you?")]))
    handed = []
    while not inbox.empty():
        handed.append(inbox.get_nowait())
    assert isinstance(handed[-1], EndOfReply)
    return events


def _spoken(events: list[PipelineEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, ReplyChunk)]


def test_an_all_out_of_character_reply_is_asked_again() -> None:
    model = _scripted("I am an AI assistant. I am a chatbot.", "I'm Hana. Nice to meet you!")
    events = _answer(model)
    assert len(model.prompts) == 2
    assert _spoken(events) == ["I'm Hana.", "Nice to meet you!"]
    finished = [e for e in events if isinstance(e, ReplyFinished)]
    assert len(finished) == 1 and finished[0].chunks == 2


def test_it_is_asked_again_only_once() -> None:
    model = _scripted("I am an AI assistant.")
    events = _answer(model)
    assert len(model.prompts) == 2
    assert _spoken(events) == []


def test_a_reply_that_said_something_is_not_regenerated() -> None:
    model = _scripted("I'm Hana. As an AI language model, I like tea.", "Never asked.")
    events = _answer(model)
    assert len(model.prompts) == 1
    assert _spoken(events) == ["I'm Hana."]


def test_a_cancelled_turn_is_not_asked_again() -> None:
    model = _scripted("I am an AI assistant. I am a chatbot.", "I'm Hana.")
    events = _answer(model, cancel_after_first=True)
    assert len(model.prompts) == 1
    assert _spoken(events) == []


def test_the_rest_of_an_out_of_character_sentence_goes_with_it() -> None:
    # the gate speaks a sentence in parts ("As an AI model, | I have no feelings at all."):
    # once a part breaks character, the rest of its sentence is not said either
    model = _scripted("As an AI model, I have no feelings at all. But I do love tea, truly.")
    events = _answer(model)
    assert _spoken(events) == ["But I do love tea, truly."]
