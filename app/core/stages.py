"""The worker stages of a turn, each a thread with an inbox.

The turn machine's commands are the stages' jobs (``StartTurn`` for the transcriber,
``Respond`` for the responder): one name per message, routed by one table in the pipeline.

Each stage checks the live turn before and during its work, so a barge-in or a resumed
utterance stops the work in flight (the LLM within one token, TTS before the next chunk).
Errors become ``StageFailed`` events instead of killing the thread.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from app.core.character import breaks_character
from app.core.events import (
    PipelineEvent,
    PrefixReuse,
    ReplyChunk,
    ReplyFinished,
    SpeechAudio,
    StageFailed,
    TokenDelta,
    Transcript,
)
from app.core.playback import PlaybackQueue
from app.core.ports import (
    ChatMessage,
    Clock,
    LanguageModel,
    PromptStats,
    SpeechRecognizer,
    SpeechSynthesizer,
)
from app.core.sentences import SentenceGate
from app.core.turn import Respond, StartTurn

log = logging.getLogger(__name__)

Publish = Callable[[PipelineEvent], None]


class LiveTurn:
    """The one turn whose work is still wanted. Reads and writes are atomic ints."""

    def __init__(self) -> None:
        self.turn_id: int | None = None
        self.activity = 0
        """Bumped when the user starts speaking or a turn starts: background work (the
        memory extraction) started at another value is no longer wanted."""

    def is_live(self, turn_id: int) -> bool:
        return self.turn_id == turn_id


class _Stop:
    pass


_STOP = _Stop()

Job = TypeVar("Job")


class Worker(Generic[Job]):
    """A thread draining a typed inbox; subclasses implement ``handle``."""

    name = "worker"

    def __init__(self, publish: Publish) -> None:
        self.publish = publish
        self.inbox: queue.Queue[Job] = queue.Queue()
        self._handling = False
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.inbox.put(cast(Job, _STOP))  # the one item outside the inbox's type
        if self._thread.is_alive():
            self._thread.join(timeout)

    def busy(self) -> bool:
        """Work is queued or in progress."""
        return self._handling or not self.inbox.empty()

    def _run(self) -> None:
        while True:
            item = self.inbox.get()
            if isinstance(item, _Stop):
                return
            self._handling = True
            try:
                self.handle(item)
            except Exception as exc:
                log.exception("%s failed", self.name)
                turn_id = getattr(item, "turn_id", None)
                self.publish(StageFailed(self.name, str(exc) or type(exc).__name__, turn_id))
            finally:
                self._handling = False

    def handle(self, item: Job) -> None:
        raise NotImplementedError


class Transcriber(Worker[StartTurn]):
    name = "asr"

    def __init__(self, publish: Publish, asr: SpeechRecognizer, live: LiveTurn, clock: Clock):
        super().__init__(publish)
        self.asr, self.live, self.clock = asr, live, clock

    def handle(self, item: StartTurn) -> None:
        assert isinstance(item, StartTurn)  # the turn machine's command is the job
        if not self.live.is_live(item.turn_id):
            return
        text = self.asr.transcribe(item.audio)
        if self.live.is_live(item.turn_id):
            self.publish(Transcript(item.turn_id, text, self.clock.now()))


@dataclass(frozen=True)
class WarmJob:
    messages: list[ChatMessage]


@dataclass(frozen=True)
class ExtractJob:
    """Background work for the idle app (the memory extraction): the LLM's whole output
    is handed to ``done`` (None when it was cancelled). Nothing is published, spoken or
    kept in the history; any user speech or turn cancels it within one token."""

    messages: list[ChatMessage]
    activity: int
    done: Callable[[str | None], None]
    max_chars: int = 600


@dataclass(frozen=True)
class EndOfReply:
    turn_id: int


@dataclass(frozen=True)
class SetVoice:
    """A persona's voice and speed, applied on the TTS thread between chunks (engines
    with ``voice``/``speed`` attributes, like Kokoro; others ignore it)."""

    voice: str
    speed: float


ResponderJob = Respond | WarmJob | ExtractJob
SynthesizerJob = ReplyChunk | EndOfReply | SetVoice


class Responder(Worker[ResponderJob]):
    """Streams the LLM through the sentence gate into the synthesizer's inbox."""

    name = "llm"

    def __init__(
        self,
        publish: Publish,
        llm: LanguageModel,
        live: LiveTurn,
        clock: Clock,
        synthesizer_inbox: queue.Queue[SynthesizerJob],
        max_sentences: int | None = None,
    ) -> None:
        super().__init__(publish)
        self.llm, self.live, self.clock = llm, live, clock
        self.synthesizer_inbox = synthesizer_inbox
        self.max_sentences = max_sentences

    def handle(self, item: ResponderJob) -> None:
        if isinstance(item, WarmJob):
            stats = self.llm.warm(item.messages)
            log.info("warmed persona prefix: %d tokens", stats.prompt_tokens)
            return
        if isinstance(item, ExtractJob):
            self._extract(item)
            return
        assert isinstance(item, Respond)  # the turn machine's command is the job
        turn_id = item.turn_id
        if not self.live.is_live(turn_id):
            return
        gate = SentenceGate()
        reply: list[str] = []
        chunks = 0

        def report(stats: PromptStats) -> None:
            self.publish(PrefixReuse(turn_id, stats.prompt_tokens, stats.reused_tokens))

        def emit(texts: list[str]) -> None:
            nonlocal chunks
            for text in texts:
                if breaks_character(text):
                    log.info("turn %d: dropped an out-of-character sentence", turn_id)
                    continue
                chunk = ReplyChunk(turn_id, chunks, text, self.clock.now())
                chunks += 1
                self.synthesizer_inbox.put(chunk)
                self.publish(chunk)

        def cancelled() -> bool:
            return not self.live.is_live(turn_id)

        def enough() -> bool:
            return self.max_sentences is not None and chunks >= self.max_sentences

        try:
            for piece in self.llm.stream(item.messages, cancelled, report):
                self.publish(TokenDelta(turn_id, piece, self.clock.now(), first=not reply))
                reply.append(piece)
                emit(gate.push(piece))
                if enough():  # a spoken reply, not an essay: stop decoding here
                    log.info("turn %d: reply capped at %d sentences", turn_id, chunks)
                    break
            if not cancelled() and not enough():
                emit(gate.flush())
        finally:
            self.synthesizer_inbox.put(EndOfReply(turn_id))
            self.publish(
                ReplyFinished(turn_id, "".join(reply), chunks, self.clock.now(), cancelled())
            )


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
        except Exception:  # background help: a failure is logged, never shown as a fault
            log.exception("memory extraction failed")
            text = None
        if cancelled():
            log.info("memory extraction cancelled: the user is talking")
            text = None
        job.done(None if text is None else "".join(text))


class Synthesizer(Worker[SynthesizerJob]):
    name = "tts"

    def __init__(
        self,
        publish: Publish,
        tts: SpeechSynthesizer,
        live: LiveTurn,
        clock: Clock,
        playback: PlaybackQueue,
    ) -> None:
        super().__init__(publish)
        self.tts, self.live, self.clock, self.playback = tts, live, clock, playback

    def handle(self, item: SynthesizerJob) -> None:
        if isinstance(item, EndOfReply):
            self.playback.finish(item.turn_id)
            return
        if isinstance(item, SetVoice):
            if isinstance(getattr(self.tts, "voice", None), str):
                self.tts.voice = item.voice  # type: ignore[attr-defined]
                self.tts.speed = item.speed  # type: ignore[attr-defined]
            return
        assert isinstance(item, ReplyChunk)
        if not self.live.is_live(item.turn_id):
            return
        samples = self.tts.synthesize(item.text)
        if not self.live.is_live(item.turn_id):
            return
        self.publish(
            SpeechAudio(
                item.turn_id,
                item.index,
                item.text,
                samples,
                self.tts.sample_rate,
                self.clock.now(),
            )
        )
        self.playback.enqueue(item.turn_id, samples, item.text)
