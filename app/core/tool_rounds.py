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


def run_bounded(run: ToolRunner, call: ToolCall, cancelled: Callable[[], bool],
                timeout_s: float = TOOL_TIMEOUT_S) -> ToolResult:
    """``run(call)`` on its own thread: the turn's cancellation reaches it within 50 ms,
    and a tool that hangs is abandoned after ``timeout_s`` with a failed result."""
    cancel = threading.Event()
    box: list[ToolResult] = []

    def work() -> None:
        try:
            box.append(run(call, cancel))
        except Exception as exc:  # a tool's bug is a failed result, never a dead turn
            log.exception("tool %s failed", call.name)
            box.append(ToolResult.failure(f"{call.name} failed: {exc}"))

    worker = threading.Thread(target=work, name=f"tool-{call.name}", daemon=True)
    worker.start()
    waited = 0.0
    while worker.is_alive() and waited < timeout_s:
        if cancelled():
            cancel.set()
        worker.join(CANCEL_POLL_S)
        waited += CANCEL_POLL_S
    if box:
        return box[0]
    cancel.set()
    return ToolResult.failure(f"{call.name} did not answer within {timeout_s:.0f} s.")


def reply_with_tools(
    llm: CallsTools,
    messages: Sequence[ChatMessage],
    cancelled: Callable[[], bool],
    on_prompt: Callable[[PromptStats], None] | None,
    run: ToolRunner,
    language: str = "en",
    first: Iterator[str] | None = None,
) -> Iterator[str]:
    """The reply's speakable text, piece by piece, with tool rounds in between.
    ``first``: the first round's stream when the caller has already started it."""
    written, last = "", ""
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
        for call in calls:
            result = run_bounded(run, call, cancelled)
            log.info("tool %s: %s", call.name, "ok" if result.ok else "failed")
            written += response_text(call.name, result.text)  # opens with <|tool_response>
