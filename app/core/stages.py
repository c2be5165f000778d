"""The worker stages of a turn, each a thread with an inbox.

The turn machine's commands are the stages' jobs (``StartTurn`` for the transcriber,
``Respond`` for the responder): one name per message, routed by ``runtime.router``.

Each stage checks the live turn before and during its work, so a barge-in or a resumed
utterance stops the work in flight (the LLM within one token, TTS before the next chunk).
Errors become ``StageFailed`` events instead of killing the thread; a reply the language
model fails to finish ends with a spoken apology and a ``ReplyFailed`` notice instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace

from app.core.apology import apology
from app.core.character import breaks_character
from app.core.events import (
    ReplyChunk,
    ReplyFinished,
    StageFailed,
)
from app.core.gate_config import GateConfig
from app.core.ports import (
    CallsTools,
    Clock,
    LanguageModel,
    PromptStats,
    TunesTemperature,
)
from app.core.sentences import SentenceGate, Spoken
from app.core.stage_jobs import (
    EndOfReply,
    ExtractJob,
    SetReplyOptions,
    UseTools,
    WarmJob,
)
from app.core.synthesizer import SynthesizerJob
from app.core.telemetry import PrefixReuse, ReplyFailed, TokenDelta
from app.core.tool_rounds import PAUSE, ToolRunner, ToolWait, WaitingLines, reply_with_tools
from app.core.turn_commands import Respond
from app.core.worker import HEAVY_WORK_NICENESS, LiveTurn, Publish, Worker
from app.errors import first_line
from app.tools.spec import ToolCall, ToolResult

log = logging.getLogger(__name__)

ResponderJob = Respond | WarmJob | ExtractJob | SetReplyOptions | UseTools
FIRST_AUDIO_WAIT_S = 2.0
"""The longest the responder waits for the first chunk's synthesis (a stuck voice must
not stop the reply)."""
SILENT_REPLY_RETRIES = 1
"""How often a reply with nothing to say aloud (every sentence out of character, or
nothing speakable) is generated again: sampling differs on the second try, and a user who
asked something should hear an answer, not silence."""


class Responder(Worker[ResponderJob]):
    """Streams the LLM through the sentence gate into the synthesizer's inbox."""

    name = "llm"
    niceness = HEAVY_WORK_NICENESS

    def __init__(
        self,
        publish: Publish,
        llm: LanguageModel,
        live: LiveTurn,
        clock: Clock,
        to_synthesizer: Callable[[SynthesizerJob], None],
        max_sentences: int | None = None,
        gate: GateConfig | None = None,
    ) -> None:
        """``to_synthesizer`` hands chunks to the voice (the pipeline's job routing)."""
        super().__init__(publish)
        self.llm, self.live, self.clock = llm, live, clock
        self.to_synthesizer = to_synthesizer
        self.max_sentences = max_sentences
        self.gate = gate
        """Where replies are cut into chunks (None: the gate's defaults)."""
        self.run_tool: ToolRunner | None = None
        """Runs the model's tool calls (None: the model was offered none)."""
        self.waiting = WaitingLines(ToolWait())
        """The persona's lines for a slow tool."""

    def handle(self, item: ResponderJob) -> None:
        if isinstance(item, WarmJob):
            if item.after_reply and not self.inbox.empty():
                return  # the turn waiting behind it evaluates the same prefix
            try:
                stats = self.llm.warm(item.messages)
            except Exception as exc:  # a server that is down: one line, each turn tries again
                log.info("warming the persona prefix failed", exc_info=True)
                if not item.after_reply:
                    self.publish(StageFailed(self.name, first_line(exc), None))
                return
            log.info("warmed persona prefix: %d tokens", stats.prompt_tokens)
            return
        if isinstance(item, ExtractJob):
            self._extract(item)
            return
        if isinstance(item, UseTools):
            offered = isinstance(self.llm, CallsTools) and self.llm.offer_tools(item.specs)
            self.run_tool = item.run if offered else None
            return
        if isinstance(item, SetReplyOptions):
            self.max_sentences = item.max_sentences
            self.waiting = WaitingLines(item.tool_wait)
            if isinstance(self.llm, TunesTemperature):
                self.llm.set_temperature(item.temperature)
            return
        assert isinstance(item, Respond)  # the turn machine's command is the job
        turn_id = item.turn_id
        if not self.live.is_live(turn_id):
            return
        reply: list[str] = []
        failed: str | None = None  # one line: why the model could not finish the reply
        chunks = 0
        sentences = 0  # a clause chunk ("そうですね、") is not a sentence of the cap

        def report(stats: PromptStats) -> None:
            self.publish(PrefixReuse(turn_id, stats.prompt_tokens, stats.reused_tokens))

        dropping = False  # the rest of a sentence whose first part broke character

        def emit(spoken: list[Spoken]) -> None:
            nonlocal chunks, sentences, dropping
            for text, emotion, sentence_end in spoken:
                if dropping or breaks_character(text):
                    dropping = not sentence_end
                    log.info("turn %d: dropped an out-of-character sentence", turn_id)
                    continue
                chunk = ReplyChunk(turn_id, chunks, text, self.clock.now(), item.language,
                                   emotion)
                if chunks == 0 and self.live.first_audio_priority:
                    self.live.first_audio_done.clear()  # set again by the synthesizer
                chunks += 1
                sentences += sentence_end
                self.to_synthesizer(chunk)
                self.publish(chunk)

        def cancelled() -> bool:
            return not self.live.is_live(turn_id)

        def enough() -> bool:
            return self.max_sentences is not None and sentences >= self.max_sentences

        try:
            for attempt in range(1 + SILENT_REPLY_RETRIES):
                if attempt:
                    log.info("turn %d: nothing in character to say; asking again", turn_id)
                gate = SentenceGate(self.gate)
                pieces = self._pieces(item, cancelled, report)
                for piece in pieces:
                    if piece is PAUSE:  # tools run now: say what came before them
                        emit(gate.finish())
                        continue
                    self.publish(TokenDelta(turn_id, piece, self.clock.now(), first=not reply))
                    reply.append(piece)
                    emit(gate.feed(piece))
                    if not self.live.first_audio_done.is_set():  # the first chunk goes first
                        self.live.first_audio_done.wait(FIRST_AUDIO_WAIT_S)
                    if enough():  # a spoken reply, not an essay: stop decoding here
                        log.info("turn %d: reply capped at %d sentences", turn_id, sentences)
                        break
                if not cancelled() and not enough():
                    emit(gate.finish())
                if chunks or cancelled():
                    break
        except Exception as exc:  # the model or its server failed: say so, in character
            failed = first_line(exc)
            # the traceback goes to the log file only (INFO); the user gets one line
            log.info("turn %d: the reply failed: %s", turn_id, failed, exc_info=True)
            if not cancelled():  # what was said stays; the unfinished sentence does not
                chunk = ReplyChunk(turn_id, chunks, apology(item.language), self.clock.now(),
                                   item.language)
                chunks += 1
                self.to_synthesizer(chunk)
                self.publish(chunk)
        finally:
            self.to_synthesizer(EndOfReply(turn_id))
            self.publish(
                ReplyFinished(turn_id, "".join(reply), chunks, self.clock.now(), cancelled())
            )
        if failed is not None:
            self.publish(ReplyFailed(turn_id, failed, self.clock.now()))


    def _pieces(self, item: Respond, cancelled: Callable[[], bool],
                report: Callable[[PromptStats], None]) -> Iterator[str]:
        """The reply's text: the scripted one, the model's, or the model's with its tool
        calls taken out and answered (``tool_rounds``)."""
        if item.scripted is not None:
            return iter((item.scripted,))
        first = self.llm.stream(item.messages, cancelled, report)
        if self.run_tool is None or not isinstance(self.llm, CallsTools):
            return first
        run = self.run_tool

        def run_for_turn(call: ToolCall, cancel: threading.Event) -> ToolResult:
            return run(replace(call, turn_id=item.turn_id), cancel)

        return reply_with_tools(self.llm, item.messages, cancelled, report, run_for_turn,
                                item.language or "en", first=first, waiting=self.waiting)

    def _extract(self, job: ExtractJob) -> None:
        def cancelled() -> bool:  # a turn starting or the user speaking bumps activity
            return self.live.activity != job.activity

        text: list[str] | None = None
        try:
            if not cancelled():  # a reply queued behind it always goes first
                text = []
                for piece in self.llm.stream(job.messages, cancelled):
                    text.append(piece)
                    if sum(map(len, text)) >= job.max_chars:
                        break
        except Exception:  # background help: a failure is logged (the file), never shown
            log.info("memory extraction failed", exc_info=True)
            text = None
        if cancelled():
            log.info("memory extraction cancelled: the user is talking")
            text = None
        job.done(None if text is None else "".join(text))
