"""A reply the language model cannot finish (its server answered 500, sent garbage or cut
the stream off) ends with the persona saying sorry in the reply's language, after what it
had already said; the reason is one ``ReplyFailed`` line for the window or ``hanasu run``,
never spoken, and the responder thread lives on for the next turn."""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator, Sequence

import pytest

from app.core.apology import APOLOGIES, apology
from app.core.character import breaks_character
from app.core.events import PipelineEvent, ReplyChunk, ReplyFinished, StageFailed
from app.core.ports import ChatMessage, PromptStats
from app.core.stage_jobs import EndOfReply, WarmJob
from app.core.stages import Responder
from app.core.synthesizer import SynthesizerJob
from app.core.telemetry import ReplyFailed
from app.core.turn_commands import Respond
from app.core.worker import LiveTurn


class ServerDown(RuntimeError):
    pass


class _FailingModel:
    """Yields ``pieces``, then raises as a server that failed mid-reply does."""

    def __init__(self, pieces: Sequence[str] = (), message: str = "server error (HTTP 500)"):
        self.pieces, self.message = list(pieces), message
        self.cancel_at: int | None = None
        self.live: LiveTurn | None = None

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        raise ServerDown(self.message)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        for n, piece in enumerate(self.pieces):
            if self.cancel_at == n and self.live is not None:
                self.live.turn_id = 99  # the user spoke again: the turn is over
            yield piece
        raise ServerDown(f"{self.message}\nTraceback-like second line")


class _Clock:
    def now(self) -> float:
        return 0.0


def _answer(
    model: _FailingModel, language: str = "en", cancel_at: int | None = None
) -> tuple[list[PipelineEvent], list[SynthesizerJob]]:
    events: list[PipelineEvent] = []
    live = LiveTurn()
    live.turn_id = 1
    live.first_audio_priority = False  # no synthesizer here to say the first chunk is done
    model.live, model.cancel_at = live, cancel_at
    inbox: queue.Queue[SynthesizerJob] = queue.Queue()
    responder = Responder(events.append, model, live, _Clock(), inbox.put)  # type: ignore[arg-type]
    responder.handle(Respond(1, [ChatMessage("user", "Tell me about the sea.")], language))
    handed = []
    while not inbox.empty():
        handed.append(inbox.get_nowait())
    assert isinstance(handed[-1], EndOfReply)
    return events, handed


def _spoken(events: list[PipelineEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, ReplyChunk)]


def test_a_failure_before_any_word_is_an_apology_and_one_line() -> None:
    events, handed = _answer(_FailingModel())
    assert _spoken(events) == [APOLOGIES["en"]]
    assert [j.text for j in handed if isinstance(j, ReplyChunk)] == [APOLOGIES["en"]]  # voiced
    finished = [e for e in events if isinstance(e, ReplyFinished)]
    assert len(finished) == 1 and finished[0].chunks == 1 and not finished[0].cancelled
    [failed] = [e for e in events if isinstance(e, ReplyFailed)]
    assert failed.turn_id == 1 and failed.message == "server error (HTTP 500)"  # one line
    assert events[-1] is failed  # after the turn's own end: the reply is played, not cut
    assert not [e for e in events if isinstance(e, StageFailed)]


def test_what_was_said_stays_and_the_unfinished_sentence_is_dropped() -> None:
    model = _FailingModel(["The", " sea", " is", " wide.", " Whales", " sing"])
    events, _ = _answer(model)
    assert _spoken(events) == ["The sea is wide.", APOLOGIES["en"]]


@pytest.mark.parametrize("language", ["ja", "zh", "ja-JP"])
def test_the_apology_is_in_the_reply_language(language: str) -> None:
    events, handed = _answer(_FailingModel(), language)
    [chunk] = [e for e in events if isinstance(e, ReplyChunk)]
    assert chunk.text == APOLOGIES[language[:2]] and chunk.language == language
    assert any(isinstance(j, ReplyChunk) and j.text == chunk.text for j in handed)


def test_a_cancelled_turn_is_not_apologised_for_but_still_reported() -> None:
    events, _ = _answer(_FailingModel(["Well,", " you", " see"]), cancel_at=1)
    assert APOLOGIES["en"] not in _spoken(events)
    assert [e.turn_id for e in events if isinstance(e, ReplyFailed)] == [1]


def test_a_failed_warm_up_is_one_line_not_a_crash() -> None:
    events: list[PipelineEvent] = []
    model = _FailingModel(message="cannot connect")
    responder = Responder(events.append, model, LiveTurn(), _Clock(), lambda job: None)  # type: ignore[arg-type]
    responder.handle(WarmJob([ChatMessage("system", "You are Hana.")]))
    assert events == [StageFailed("llm", "cannot connect", None)]


def test_the_apologies_are_in_character_and_fall_back_to_english() -> None:
    for text in APOLOGIES.values():
        assert not breaks_character(text)
    assert apology("fr") == APOLOGIES["en"] and apology(None) == APOLOGIES["en"]
    assert apology("zh-Hans-CN") == APOLOGIES["zh"]
