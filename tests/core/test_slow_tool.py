"""A tool that takes its time: what the model said before calling it is spoken at once
(not held until the tool answers), and once the call has run the persona's late-answer
deadline, one of the persona's waiting lines is said, in character, before the answer.
A fast tool gets no waiting line, and a reply says one at most."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from app.core.events import PipelineEvent, ReplyChunk, ReplyFinished
from app.core.ports import ChatMessage, PromptStats
from app.core.stage_jobs import EndOfReply, SetReplyOptions, UseTools
from app.core.stages import Responder
from app.core.synthesizer import SynthesizerJob
from app.core.tool_rounds import ToolWait
from app.core.turn_commands import Respond
from app.core.worker import LiveTurn
from app.tools.gemma4 import CALL_CLOSE, CALL_OPEN
from app.tools.spec import ToolCall, ToolResult, ToolSpec

LOOKUP = ToolSpec("look_up", "Looks a word up.", {"type": "object", "properties": {}},
                  side_effects=False)


class TwoCalls:
    """Says a sentence, calls ``look_up``; after the response, calls it again (a second
    slow call), then answers."""

    def __init__(self) -> None:
        self.rounds = 0

    def offer_tools(self, specs: Sequence[ToolSpec]) -> bool:
        return True

    def stream(self, messages: Sequence[ChatMessage], cancelled: Callable[[], bool],
               on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        yield from ["Let me look", " that up.", CALL_OPEN, "call:look_up{}", CALL_CLOSE]

    def stream_after(self, messages: Sequence[ChatMessage], written: str,
                     cancelled: Callable[[], bool],
                     on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        self.rounds += 1
        if self.rounds == 1:
            yield from [CALL_OPEN, "call:look_up{}", CALL_CLOSE]
        else:
            yield from ["It means", " a small bird."]

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        return PromptStats(0, 0)


class _Clock:
    def now(self) -> float:
        return time.monotonic()


def _reply(tool_s: float, wait: ToolWait) -> tuple[list[tuple[float, str]], list[float], str]:
    """(when each chunk was handed to the voice, its text), when each call ended, and
    the reply as finished."""
    events: list[PipelineEvent] = []
    live = LiveTurn()
    live.turn_id = 1
    live.first_audio_priority = False
    handed: queue.Queue[SynthesizerJob] = queue.Queue()
    ended: list[float] = []

    def look_up(call: ToolCall, cancel: threading.Event) -> ToolResult:
        assert call.turn_id == 1  # the runner knows whose call it is
        cancel.wait(tool_s)
        ended.append(time.monotonic())
        return ToolResult("a small bird", "")

    chunks: list[tuple[float, str]] = []

    def to_voice(job: SynthesizerJob) -> None:
        if isinstance(job, ReplyChunk):
            chunks.append((time.monotonic(), job.text))
        handed.put(job)

    responder = Responder(events.append, TwoCalls(), live, _Clock(), to_voice)  # type: ignore[arg-type]
    responder.handle(UseTools((LOOKUP,), look_up))
    responder.handle(SetReplyOptions(None, None, wait))
    responder.handle(Respond(1, [ChatMessage("user", "What is a wren?")], "en"))
    [finished] = [e for e in events if isinstance(e, ReplyFinished)]
    jobs = []
    while not handed.empty():
        jobs.append(handed.get_nowait())
    assert isinstance(jobs[-1], EndOfReply)
    return chunks, ended, finished.text


def test_a_slow_tool_hears_the_words_before_it_and_one_waiting_line() -> None:
    chunks, ended, text = _reply(0.6, ToolWait(0.2, ("Hang on, I'm checking.",)))
    said = [t for _, t in chunks]
    assert said[0] == "Let me look that up."
    assert chunks[0][0] < ended[0]  # spoken while the tool still ran
    waiting = [when for when, t in chunks if "Hang on" in t]
    assert len(waiting) == 1 and waiting[0] < ended[0]  # once, though both calls were slow
    assert said[-1] == "It means a small bird."
    assert "Hang on, I'm checking." in text and "call:" not in text


def test_a_fast_tool_gets_no_waiting_line() -> None:
    chunks, _, text = _reply(0.0, ToolWait(0.5, ("Hang on, I'm checking.",)))
    assert [t for _, t in chunks] == ["Let me look that up.", "It means a small bird."]
    assert "Hang on" not in text


def test_a_persona_without_waiting_lines_waits_in_silence() -> None:
    chunks, _, _ = _reply(0.4, ToolWait(0.1, ()))
    assert [t for _, t in chunks] == ["Let me look that up.", "It means a small bird."]
