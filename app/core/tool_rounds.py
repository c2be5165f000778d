"""A reply that may call tools, as one stream of speakable text.

The model's text goes on to the sentence gate with its calls taken out (``CallStream``:
a call is never spoken); each call runs off the model's thread, bounded in time and
cancelled with the turn; its response is written back in the model's own format and the
model goes on in the same turn, at most ``MAX_ROUNDS`` times. What a tool did stays done
when the turn is cancelled; the runner says what it did in its result.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from app.core.markup import is_cjk
from app.core.ports import CallsTools, ChatMessage, PromptStats
from app.tools.gemma4 import CallStream, response_text
from app.tools.spec import ToolCall, ToolResult

log = logging.getLogger(__name__)

MAX_ROUNDS = 3
"""Calls answered per reply before the model must answer in words."""
TOOL_TIMEOUT_S = 10.0
"""A tool that has not answered by then gets a failed result: the conversation goes on."""
CANCEL_POLL_S = 0.05

ToolRunner = Callable[[ToolCall, threading.Event], ToolResult]
"""Runs one call; the event is set when the turn is cancelled."""


class BoundedCall:
    """One call running on its own thread: the turn's cancellation reaches it within
    50 ms, and a tool that hangs is abandoned after ``timeout_s`` with a failed result."""

    def __init__(self, run: ToolRunner, call: ToolCall, cancelled: Callable[[], bool],
                 timeout_s: float = TOOL_TIMEOUT_S) -> None:
        self.call, self._cancelled, self._timeout_s = call, cancelled, timeout_s
        self._cancel = threading.Event()
        self._box: list[ToolResult] = []
        self._waited = 0.0
        self._worker = threading.Thread(target=self._work, args=(run,),
                                        name=f"tool-{call.name}", daemon=True)
        self._worker.start()

    def _work(self, run: ToolRunner) -> None:
        try:
            self._box.append(run(self.call, self._cancel))
        except Exception as exc:  # a tool's bug is a failed result, never a dead turn
            log.exception("tool %s failed", self.call.name)
            self._box.append(ToolResult.failure(f"{self.call.name} failed: {exc}"))

    def wait(self, seconds: float | None = None) -> ToolResult | None:
        """The result once it is in (or the bound passed); None when ``seconds`` ran out
        first and the call goes on."""
        until = self._timeout_s if seconds is None else min(
            self._timeout_s, self._waited + seconds)
        while self._worker.is_alive() and self._waited < until:
            if self._cancelled():
                self._cancel.set()
            self._worker.join(CANCEL_POLL_S)
            self._waited += CANCEL_POLL_S
        if self._box:
            return self._box[0]
        if self._waited < self._timeout_s:
            return None
        self._cancel.set()
        return ToolResult.failure(
            f"{self.call.name} did not answer within {self._timeout_s:.0f} s.")


def run_bounded(run: ToolRunner, call: ToolCall, cancelled: Callable[[], bool],
                timeout_s: float = TOOL_TIMEOUT_S) -> ToolResult:
    """``run(call)`` on its own thread, bounded and cancellable (``BoundedCall``)."""
    result = BoundedCall(run, call, cancelled, timeout_s).wait()
    assert result is not None  # wait() without a limit ends with the bound
    return result


@dataclass(frozen=True)
class ToolWait:
    """What the persona says when a tool is slow: one of ``lines`` (in turn) once a call
    has run ``after_s`` (the persona's late-answer deadline) without answering."""

    after_s: float = 1.2
    lines: tuple[str, ...] = ()


class WaitingLines:
    """The persona's waiting lines in turn, so the same one is not heard twice running
    (the responder keeps one across replies)."""

    def __init__(self, wait: ToolWait) -> None:
        self.wait, self._next = wait, 0

    def line(self) -> str | None:
        if not self.wait.lines:
            return None
        line = self.wait.lines[self._next % len(self.wait.lines)]
        self._next += 1
        return line


class ToolPause(str):
    """Yielded when the reply stops for its tools: the text so far is spoken now (the
    sentence gate flushes), not held until the tool answers."""


PAUSE = ToolPause("")


def reply_with_tools(
    llm: CallsTools,
    messages: Sequence[ChatMessage],
    cancelled: Callable[[], bool],
    on_prompt: Callable[[PromptStats], None] | None,
    run: ToolRunner,
    language: str = "en",
    first: Iterator[str] | None = None,
    waiting: WaitingLines | None = None,
) -> Iterator[str]:
    """The reply's speakable text, piece by piece, with tool rounds in between: before
    its tools run, ``PAUSE`` (speak what is there); while one is slow, a waiting line.
    ``first``: the first round's stream when the caller has already started it."""
    written, last = "", ""
    waiting = waiting or WaitingLines(ToolWait())
    waited_aloud = False
    for round_index in range(MAX_ROUNDS + 1):
        calls_stream = CallStream(language)
        if round_index == 0:
            source = first if first is not None else llm.stream_after(
                messages, "", cancelled, on_prompt)
        else:
            source = llm.stream_after(messages, written, cancelled, on_prompt)
        calls: list[ToolCall] = []
        fresh = round_index > 0  # a model's stream starts without its leading space
        for piece in source:
            written += piece
            got = calls_stream.feed(piece)
            calls += got.calls
            if got.text:
                if fresh and last and not last.isspace() and not is_cjk(last) \
                        and not got.text[0].isspace():
                    yield " "
                fresh, last = False, got.text[-1]
                yield got.text
        got = calls_stream.finish()
        calls += got.calls
        if got.text:
            last = got.text[-1]
            yield got.text
        if not calls or cancelled():
            return
        if round_index == MAX_ROUNDS:
            log.info("tool rounds capped at %d: the reply ends", MAX_ROUNDS)
            return
        yield PAUSE
        for call in calls:
            running = BoundedCall(run, call, cancelled)
            result = running.wait(waiting.wait.after_s)
            if result is None:
                line = None if waited_aloud else waiting.line()
                if line is not None:  # once a reply: a second slow call just waits
                    waited_aloud = True
                    if last and not last.isspace() and not is_cjk(last):
                        yield " "
                    last = line[-1]
                    yield line
                    yield PAUSE
                result = running.wait()
                assert result is not None
            log.info("tool %s: %s", call.name, "ok" if result.ok else "failed")
            written += response_text(call.name, result.text)  # opens with <|tool_response>
