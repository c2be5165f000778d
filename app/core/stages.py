"""The worker stages of a turn, each a thread with an inbox.

The turn machine's commands are the stages' jobs (``StartTurn`` for the transcriber,
``Respond`` for the responder): one name per message, routed by ``runtime.router``.

Each stage checks the live turn before and during its work, so a barge-in or a resumed
utterance stops the work in flight (the LLM within one token, TTS before the next chunk).
Errors become ``StageFailed`` events instead of killing the thread.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from app.core.acknowledgement import PrepareAcknowledgements
from app.core.character import breaks_character
from app.core.events import (
    PipelineEvent,
    ReplyChunk,
    ReplyFinished,
    SpeechAudio,
    StageFailed,
    Transcript,
)
from app.core.languages import base_language, speaking_language
from app.core.playback import PlaybackQueue
from app.core.ports import (
    ChatMessage,
    ChoosesVoice,
    Clock,
    LanguageModel,
    PinsLanguages,
    PromptStats,
    ReportsLanguage,
    ReportsNotices,
    SpeaksLanguages,
    SpeechRecognizer,
    SpeechSynthesizer,
    TunesTemperature,
)
from app.core.sentences import SentenceGate, ends_sentence
from app.core.telemetry import EngineNotice, PrefixReuse, TokenDelta
from app.core.turn_commands import Respond, StartTurn

log = logging.getLogger(__name__)

Publish = Callable[[PipelineEvent], None]


class LiveTurn:
    """The one turn whose work is still wanted. Reads and writes are atomic ints."""

    def __init__(self) -> None:
        self.turn_id: int | None = None
        self.activity = 0
        """Bumped when the user starts speaking or a turn starts: background work (the
        memory extraction) started at another value is no longer wanted."""
        self.first_audio_priority = True
        """The responder waits between tokens while the reply's first chunk is being
        synthesized: on a 2-core CPU the LLM and TTS otherwise share the cores exactly
        when the user is waiting for the first sound."""
        self.first_audio_done = threading.Event()
        """Clear from the first chunk's hand-over until the synthesizer is done with it."""
        self.first_audio_done.set()

    def is_live(self, turn_id: int) -> bool:
        return self.turn_id == turn_id


class _Stop:
    pass


_STOP = _Stop()

Job = TypeVar("Job")


HEAVY_WORK_NICENESS = 5
"""How much lower than the audio, GUI and controller threads the model stages run (Linux
and macOS nice levels). On two cores a Kokoro sentence or an LLM decode keeps every core
busy; the device callbacks and the speaker feeder must still run every few milliseconds,
or the speaker underflows (heard as dropouts) under load. Model libraries start their own
worker threads from the stage's thread, and those inherit its priority."""


def lower_this_threads_priority(niceness: int) -> bool:
    """Raise this thread's nice value (no privilege needed); False where not supported."""
    setpriority = getattr(os, "setpriority", None)
    if setpriority is None or niceness <= 0:
        return False
    try:  # PRIO_PROCESS with a thread id applies to that thread alone on Linux
        current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        setpriority(os.PRIO_PROCESS, threading.get_native_id(), current + niceness)
    except OSError:
        return False
    return True


class Worker(Generic[Job]):
    """A thread draining a typed inbox; subclasses implement ``handle``."""

    name = "worker"
    niceness = 0
    """Raised by this much on start (``HEAVY_WORK_NICENESS`` for the model stages)."""

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
        lower_this_threads_priority(self.niceness)
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
            pause = self.idle_pause_s()
            if pause > 0.0 and self.inbox.empty():
                time.sleep(pause)  # let the next items gather: one wake-up for several

    def handle(self, item: Job) -> None:
        raise NotImplementedError

    def idle_pause_s(self) -> float:
        """How long to let the inbox fill before the next item (0: take it at once)."""
        return 0.0


@dataclass(frozen=True)
class SetLanguages:
    """The languages the user may speak and hear now (a persona's, main one first), for
    the recognizer (``set_languages``: pin one, or detect among several) and the voices
    (``prepare``: load them before the first reply needs them). Engines without those
    methods ignore it."""

    languages: tuple[str, ...]


class Transcriber(Worker[StartTurn | SetLanguages]):
    name = "asr"
    niceness = HEAVY_WORK_NICENESS

    def __init__(self, publish: Publish, asr: SpeechRecognizer, live: LiveTurn, clock: Clock):
        super().__init__(publish)
        self.asr, self.live, self.clock = asr, live, clock

    def handle(self, item: StartTurn | SetLanguages) -> None:
        if isinstance(item, SetLanguages):
            if isinstance(self.asr, PinsLanguages):
                self.asr.set_languages(item.languages)
            return
        assert isinstance(item, StartTurn)  # the turn machine's command is the job
        if not self.live.is_live(item.turn_id):
            return
        text = self.asr.transcribe(item.audio)
        heard = self.asr.last_language if isinstance(self.asr, ReportsLanguage) else None
        language = base_language(heard) if text.strip() and heard else None
        if self.live.is_live(item.turn_id):
            self.publish(Transcript(item.turn_id, text, self.clock.now(), language))


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


@dataclass(frozen=True)
class SetReplyOptions:
    """A persona's sampling temperature (None: the model's default) and reply length
    (None: no cap), applied on the LLM thread between replies."""

    temperature: float | None
    max_sentences: int | None


ResponderJob = Respond | WarmJob | ExtractJob | SetReplyOptions
FIRST_AUDIO_WAIT_S = 2.0
"""The longest the responder waits for the first chunk's synthesis (a stuck voice must
not stop the reply)."""
SILENT_REPLY_RETRIES = 1
"""How often a reply with nothing to say aloud (every sentence out of character, or
nothing speakable) is generated again: sampling differs on the second try, and a user who
asked something should hear an answer, not silence."""
SynthesizerJob = ReplyChunk | EndOfReply | SetVoice | SetLanguages | PrepareAcknowledgements


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
    ) -> None:
        """``to_synthesizer`` hands chunks to the voice (the pipeline's job routing)."""
        super().__init__(publish)
        self.llm, self.live, self.clock = llm, live, clock
        self.to_synthesizer = to_synthesizer
        self.max_sentences = max_sentences

    def handle(self, item: ResponderJob) -> None:
        if isinstance(item, WarmJob):
            stats = self.llm.warm(item.messages)
            log.info("warmed persona prefix: %d tokens", stats.prompt_tokens)
            return
        if isinstance(item, ExtractJob):
            self._extract(item)
            return
        if isinstance(item, SetReplyOptions):
            self.max_sentences = item.max_sentences
            if isinstance(self.llm, TunesTemperature):
                self.llm.set_temperature(item.temperature)
            return
        assert isinstance(item, Respond)  # the turn machine's command is the job
        turn_id = item.turn_id
        if not self.live.is_live(turn_id):
            return
        reply: list[str] = []
        chunks = 0
        sentences = 0  # a clause chunk ("そうですね、") is not a sentence of the cap

        def report(stats: PromptStats) -> None:
            self.publish(PrefixReuse(turn_id, stats.prompt_tokens, stats.reused_tokens))

        def emit(texts: list[str]) -> None:
            nonlocal chunks, sentences
            for text in texts:
                if breaks_character(text):
                    log.info("turn %d: dropped an out-of-character sentence", turn_id)
                    continue
                chunk = ReplyChunk(turn_id, chunks, text, self.clock.now(), item.language)
                if chunks == 0 and self.live.first_audio_priority:
                    self.live.first_audio_done.clear()  # set again by the synthesizer
                chunks += 1
                sentences += ends_sentence(text)
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
                gate = SentenceGate()
                for piece in self.llm.stream(item.messages, cancelled, report):
                    self.publish(TokenDelta(turn_id, piece, self.clock.now(), first=not reply))
                    reply.append(piece)
                    emit(gate.push(piece))
                    if not self.live.first_audio_done.is_set():  # the first chunk goes first
                        self.live.first_audio_done.wait(FIRST_AUDIO_WAIT_S)
                    if enough():  # a spoken reply, not an essay: stop decoding here
                        log.info("turn %d: reply capped at %d sentences", turn_id, sentences)
                        break
                if not cancelled() and not enough():
                    emit(gate.flush())
                if chunks or cancelled():
                    break
        finally:
            self.to_synthesizer(EndOfReply(turn_id))
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
    niceness = HEAVY_WORK_NICENESS

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
        self.main_language = "en"
        """The persona's main language: what a chunk with no language of its own is in."""

    def handle(self, item: SynthesizerJob) -> None:
        try:
            self._handle(item)
        finally:
            if isinstance(item, ReplyChunk) and item.index == 0:
                self.live.first_audio_done.set()  # the responder decodes on
            self._publish_notices()

    def _handle(self, item: SynthesizerJob) -> None:
        if isinstance(item, EndOfReply):
            self.playback.finish(item.turn_id)
            return
        if isinstance(item, SetVoice):
            if isinstance(self.tts, ChoosesVoice) and isinstance(self.tts.voice, str):
                self.tts.voice = item.voice
                self.tts.speed = item.speed
            return
        if isinstance(item, PrepareAcknowledgements):  # a persona's "Hmm," made ready
            item.run(self.tts)
            return
        if isinstance(item, SetLanguages):
            self.main_language = item.languages[0] if item.languages else "en"
            if isinstance(self.tts, SpeaksLanguages):
                self.tts.prepare(item.languages)
            return
        assert isinstance(item, ReplyChunk)
        if not self.live.is_live(item.turn_id):
            return
        if isinstance(self.tts, SpeaksLanguages):  # the chunk's script decides: kana is never
            # read in English
            self.tts.use_language(speaking_language(item.text, item.language or self.main_language))
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

    def _publish_notices(self) -> None:
        """Problems the voices found (a language's voice that fell back to eSpeak), once."""
        if not isinstance(self.tts, ReportsNotices):
            return
        for message in self.tts.take_notices():
            self.publish(EngineNotice(str(message), self.clock.now()))
