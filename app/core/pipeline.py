"""Builds the stages, wires their queues and runs the turn machine on one thread.

Everything the stages report goes onto one bus. The controller thread feeds it to the
turn machine, executes the machine's commands, records the timeline and hands each
event to the observers (the UI bridge puts them on a queue that the GUI thread drains).
"""

from __future__ import annotations

import copy
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.acknowledgement import Acknowledger, PrepareAcknowledgements
from app.core.announce import Announcer
from app.core.conversation import Conversation, history_budget_chars
from app.core.endpointing import EndpointConfig, Endpointer
from app.core.events import (
    FloatAudio,
    PipelineEvent,
    PlaybackEnded,
    ReplyChunk,
    SpeechStarted,
    Transcript,
    TurnCommitted,
    TurnTimed,
)
from app.core.languages import base_language, language_name, reply_language_note
from app.core.listener import Listener, MicBlock, PlayedBlock, SetListening
from app.core.memory_intents import with_memories
from app.core.metrics import TimelineRecorder
from app.core.output_ring import OutputFeeder, OutputRing
from app.core.playback import PlaybackQueue
from app.core.ports import (
    ChatMessage,
    EchoCanceller,
    LanguageModel,
    SpeechRecognizer,
    SpeechSynthesizer,
    TurnDetector,
    VoiceActivity,
)
from app.core.stages import (
    EndOfReply,
    ExtractJob,
    LiveTurn,
    Responder,
    SetLanguages,
    SetVoice,
    Synthesizer,
    Transcriber,
    WarmJob,
    Worker,
)
from app.core.turn import (
    CancelTurn,
    Command,
    JudgeEndOfTurn,
    Publish,
    ReleaseTurn,
    Respond,
    ResumePlayback,
    StartTurn,
    TurnMachine,
)

log = logging.getLogger(__name__)

Observer = Callable[[PipelineEvent], None]


class MonotonicClock:
    """Seconds since ``start()``, the zero of the run's timeline."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()

    def start(self) -> None:
        self._t0 = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._t0


@dataclass(frozen=True)
class Engines:
    vad: VoiceActivity
    asr: SpeechRecognizer
    llm: LanguageModel
    tts: SpeechSynthesizer
    notices: tuple[str, ...] = ()
    """One-line problems found while loading that the user should see (a voice that fell
    back to eSpeak, ...): shown by ``hanasu run`` on stderr and in the desktop window."""
    llm_languages: tuple[str, ...] | None = None
    """The languages the language model can hold a conversation in (None: any we speak);
    the embedded SmolLM2-135M speaks English only, so a Japanese persona on it gets a
    notice pointing to a model that speaks Japanese (``llm_language_notice``)."""


def llm_language_notice(engines: Engines, persona_name: str,
                        languages: Sequence[str]) -> str | None:
    """One line for a persona whose languages the language model cannot speak, or None."""
    spoken = getattr(engines, "llm_languages", None)  # stand-in engines may lack it
    if spoken is None:
        return None
    missing = [code for code in languages if base_language(code) not in spoken]
    if not missing:
        return None
    names = " and ".join(language_name(code) for code in missing)
    return (f"{persona_name} speaks {names}, but the built-in language model answers well "
            f"only in English: get Gemma 4 in Models… (or use a language model server in "
            f"Settings) for a real conversation in {names}")


@dataclass(frozen=True)
class PipelineConfig:
    endpoint: EndpointConfig = field(default_factory=EndpointConfig)
    speculative: bool = True
    barge_in: bool = True
    max_reply_sentences: int | None = 4
    """Spoken replies stop after this many sentences (small models ramble for a minute);
    the user can always ask it to go on."""
    mic_queue_blocks: int = 512
    """Blocks the microphone may run ahead of the listener before blocks are dropped."""
    timelines_kept: int | None = None
    """Turn timelines the recorder keeps (None: all; the desktop app keeps the last 64)."""
    words_end_turns: bool = True
    """The speculative transcript at the first pause takes part in the end-of-turn call
    (off: the audio model and the silence alone, as before; ``bench turns`` compares)."""
    first_audio_priority: bool = True
    """The LLM pauses while the reply's first chunk is synthesized (off: both at once)."""


@dataclass(frozen=True)
class _SetMuted:
    muted: bool


@dataclass(frozen=True)
class _Say:
    text: str


@dataclass(frozen=True)
class _SetSystemPrompt:
    prompt: str
    exchanges: tuple[tuple[str, str], ...] = ()
    key: object = None


@dataclass(frozen=True)
class _SetLanguages:
    languages: tuple[str, ...]


@dataclass(frozen=True)
class _Extract:
    key: object
    instruction: str
    done: Callable[[str | None], None]


_DEADLINE = object()
"""What the controller's bus 'gives' when it woke for an acknowledgement's deadline."""

ContextProvider = Callable[[object, str], str]
"""``(conversation key, user text) -> note`` put before the user's words (memories)."""


class VoicePipeline:
    def __init__(
        self,
        engines: Engines,
        system_prompt: str,
        config: PipelineConfig | None = None,
        clock: MonotonicClock | None = None,
        echo: EchoCanceller | None = None,
        turn_detector: TurnDetector | None = None,
    ) -> None:
        self.config = config or PipelineConfig()
        self.clock: MonotonicClock = clock or MonotonicClock()
        self.engines = engines
        self.recorder = TimelineRecorder(self.config.timelines_kept)
        self.machine = TurnMachine(
            Conversation(system_prompt, self._history_budget(system_prompt)),
            speculative=self.config.speculative,
            barge_in=self.config.barge_in,
            sample_rate=self.config.endpoint.sample_rate,
            words_end_turns=self.config.words_end_turns,
        )
        self.dropped_mic_blocks = 0
        self._observers: list[Observer] = []
        self._bus: queue.Queue[object] = queue.Queue()
        self.live = LiveTurn()
        self.live.first_audio_priority = self.config.first_audio_priority
        self.playback = PlaybackQueue(engines.tts.sample_rate, self._bus.put_nowait)
        self.echo = echo
        self.listener = Listener(
            self._bus.put_nowait,
            engines.vad,
            Endpointer(self.config.endpoint),
            self.playback,
            echo,
            turn_detector,
            defer_to_transcript=self.config.speculative and self.config.words_end_turns,
            pause_on_voice=self.config.barge_in,
        )
        self.synthesizer = Synthesizer(
            self._bus.put_nowait, engines.tts, self.live, self.clock, self.playback
        )
        self.responder = Responder(
            self._bus.put_nowait,
            engines.llm,
            self.live,
            self.clock,
            self.send,
            self.config.max_reply_sentences,
        )
        self.announcer = Announcer(self.live, self.playback, self.send, self.clock)
        self.acknowledger = Acknowledger(self.playback, self.live.is_live, self._observe)
        self.transcriber = Transcriber(self._bus.put_nowait, engines.asr, self.live, self.clock)
        self._workers: list[Worker[Any]] = [
            self.listener, self.transcriber, self.responder, self.synthesizer]
        self._route = self._routes()
        self._jobs = self._job_routes()
        self._feeder: OutputFeeder | None = None
        self._controller = threading.Thread(target=self._control, name="controller", daemon=True)
        self._running = False
        self.conversation_key: object = None
        """Whose conversation this is (the app's persona and conversation id); set with
        ``load_conversation`` and read back per turn with ``key_of``."""
        self._turn_keys: dict[int, object] = {}
        self._context: ContextProvider | None = None
        self.languages: tuple[str, ...] = ("en",)
        """The persona's languages, main one first (controller thread)."""
        self._heard: dict[int, str] = {}
        """Language heard per recent turn (controller thread)."""

    # ---- lifecycle ------------------------------------------------------------------

    def add_observer(self, observer: Observer) -> None:
        self._observers.append(observer)

    def start(self) -> None:
        for worker in self._workers:
            worker.start()
        # The persona prefix is queued before the controller runs, so a conversation
        # loaded before start() has its (longer) warm-up queued after it, never before:
        # a later system-only warm would evict the history from the cache.
        self.warm()
        self._running = True
        self._controller.start()

    def stop(self) -> None:
        if self._feeder is not None:
            self._feeder.stop()
        self._running = False
        self.live.turn_id = None
        self._bus.put(None)
        self._controller.join(5)
        for worker in self._workers:
            worker.stop()

    def warm(self) -> None:
        """Evaluate the persona prefix in the background so the first turn is warm."""
        self.send(WarmJob(self.machine.conversation.system_messages()))

    # ---- audio device callbacks (never block) ---------------------------------------

    def push_audio(self, samples: FloatAudio, captured_at: float | None = None) -> None:
        """A captured block; ``captured_at`` (its last sample, on ``self.clock``) defaults
        to now: the listener maps the microphone's samples onto the one clock from it."""
        if self.listener.inbox.qsize() >= self.config.mic_queue_blocks:
            self.dropped_mic_blocks += 1
            return
        at = self.clock.now() if captured_at is None else captured_at
        self.listener.inbox.put_nowait(MicBlock(samples.copy(), at))

    def device_output(self, block: int) -> OutputRing:
        """For a real-time output callback: a ring the pipeline keeps filled from its own
        thread, so the callback only copies (``OutputRing.read_into``)."""
        if self._feeder is None:
            self._feeder = OutputFeeder(
                self.pull_audio, self.clock.now, self.playback.sample_rate, block,
                lead_blocks=4, has_work=lambda: not self.playback.idle(),
                wake=self.playback.wake)
            self._feeder.start()
        return self._feeder.ring

    def pull_audio(self, frames: int, plays_at: float | None = None) -> FloatAudio:
        """The next block for the speaker; ``plays_at`` (its first sample, on
        ``self.clock``) defaults to now: playback events are stamped on the one clock."""
        at = self.clock.now() if plays_at is None else plays_at
        played = self.playback.pull(frames, at)
        if self.echo is not None and self.playback.speaking:  # the canceller pads silence
            self.listener.inbox.put_nowait(PlayedBlock(played, self.playback.sample_rate))
        return played

    # ---- control from other threads -------------------------------------------------

    def set_muted(self, muted: bool) -> None:
        self.send(SetListening(muted))
        self._bus.put(_SetMuted(muted))

    def say(self, text: str) -> None:
        """Speak a fixed text (a persona's greeting) like a reply: the user talking over
        it stops it, and it is not added to the conversation. Ignored while a turn is
        live; an empty text stops what is being said."""
        self._bus.put(_Say(text))

    def set_voice(self, voice: str, speed: float) -> None:
        """Switch the voice between chunks, on the TTS thread (never from the GUI thread
        into an engine that may be synthesizing)."""
        self.send(SetVoice(voice, speed))
        again = self.acknowledger.last_job  # the "Hmm," is remade in the new voice
        if again is not None:
            self.send(again)

    def set_languages(self, languages: Sequence[str]) -> None:
        """A persona's languages (main first): the recognizer pins or detects among them,
        their voices load now, and a persona with several answers in the one it heard."""
        codes = tuple(dict.fromkeys(base_language(code) for code in languages)) or ("en",)
        self._bus.put(_SetLanguages(codes))
        self.send(SetLanguages(codes))  # to the recognizer and the voices

    def set_acknowledgement(self, after_s: float, phrases: Sequence[str], language: str) -> None:
        """A persona's "Hmm," for a late answer: the phrases are synthesized now on the TTS
        thread (in the voice set before this call), so playing one later costs nothing;
        no phrases turns acknowledgements off."""
        self.send(self.acknowledger.job(tuple(phrases), after_s, language))

    def set_reply_options(self, temperature: float | None, max_sentences: int | None) -> None:
        """A persona's LLM settings (None: the app's defaults) for the next replies."""
        self.responder.max_sentences = max_sentences or self.config.max_reply_sentences
        set_temperature = getattr(self.engines.llm, "set_temperature", None)
        if callable(set_temperature):
            set_temperature(temperature)

    def set_system_prompt(self, prompt: str) -> None:
        """Switch persona: a fresh conversation, and its prefix warmed right away."""
        self._bus.put(_SetSystemPrompt(prompt))

    def load_conversation(
        self, prompt: str, exchanges: Sequence[tuple[str, str]] = (), key: object = None
    ) -> None:
        """Switch to a persona's conversation with its history (a resumed or reopened
        one); the whole prefix, history included, is warmed in the background.

        ``key`` is the caller's name for the conversation: exchanges committed from now on
        are reported under it (``key_of``), and a turn still finishing from before the
        switch is kept out of this conversation's history."""
        self._bus.put(_SetSystemPrompt(prompt, tuple(exchanges), key))

    def set_context_provider(self, provider: ContextProvider | None) -> None:
        """Called on the controller thread before each reply; what it returns is put in
        front of the user's words in the prompt (never in the history)."""
        self._context = provider

    def extract(self, key: object, instruction: str, done: Callable[[str | None], None]) -> None:
        """Background LLM work for an idle app (the memory extraction): the conversation
        ``key`` with ``instruction`` as a last user message, so llama.cpp reuses the
        cached conversation and the next reply's prefix is still cached afterwards.

        ``done`` gets the model's output on the LLM thread, or None when the work was
        skipped or cancelled: a turn live or queued, the user speaking, or another
        conversation shown. A reply always goes first."""
        self._bus.put(_Extract(key, instruction, done))

    def _history_budget(self, system_prompt: str) -> int:
        """From the model's prompt budget (n_ctx minus a reply) where it reports one."""
        budget = getattr(self.engines.llm, "prompt_budget", None)
        try:
            tokens = budget() if callable(budget) else None
        except Exception:  # a server that is down: the default budget
            tokens = None
        if not isinstance(tokens, int):
            return Conversation.max_history_chars
        return history_budget_chars(tokens, system_prompt)

    def key_of(self, turn_id: int) -> object:
        """The conversation key the turn started under (controller thread)."""
        return self._turn_keys.get(turn_id, self.conversation_key)

    def is_idle(self) -> bool:
        """No speech in progress, no live turn, nothing queued or playing."""
        return (
            self.machine.live_turn_id is None
            and not self.machine.awaiting_commit
            and self.playback.idle()
            and not self.listener.endpointer.in_speech
            and self._bus.empty()
            and not any(worker.busy() for worker in self._workers)
        )

    # ---- controller thread ----------------------------------------------------------

    def _control(self) -> None:
        while True:
            try:  # wakes for an acknowledgement's deadline too
                item = self._bus.get(timeout=self.acknowledger.wait_s(self.clock.now()))
            except queue.Empty:
                item = _DEADLINE
            if item is None:
                return
            try:
                if item is not _DEADLINE:
                    self._dispatch(item)
                self.acknowledger.tick(self.clock.now())
            except Exception:
                log.exception("controller failed on %r", type(item).__name__)

    def _dispatch(self, item: object) -> None:
        now = self.clock.now()
        if isinstance(item, _SetMuted):
            self._execute(self.machine.set_muted(item.muted, now))
            return
        if isinstance(item, _Say):
            if self.machine.live_turn_id is None or not item.text:
                self.announcer.say(item.text)
            return
        if isinstance(item, _SetSystemPrompt):
            live = self.machine.live_turn_id
            if live is not None:
                self._execute(self.machine.cancel_live(now, "persona changed"))
            self.machine.conversation = Conversation(
                item.prompt, self._history_budget(item.prompt), list(item.exchanges)
            )
            self.conversation_key = item.key
            self.send(WarmJob(self.machine.conversation.messages_for("")[:-1]))
            return
        if isinstance(item, _SetLanguages):
            self.languages = item.languages
            return
        if isinstance(item, _Extract):
            conversation = self.machine.conversation
            if (self.machine.live_turn_id is not None or self.machine.awaiting_commit
                    or item.key != self.conversation_key or not conversation.exchanges):
                item.done(None)
                return
            messages = conversation.messages_for(item.instruction)
            self.send(ExtractJob(messages, self.live.activity, item.done))
            return
        if isinstance(item, SpeechStarted):
            self.live.activity += 1  # background LLM work stops for the user's words
        if isinstance(item, Transcript) and item.language is not None:
            self._heard[item.turn_id] = item.language
            self._heard.pop(item.turn_id - 256, None)
        event: PipelineEvent = item  # type: ignore[assignment]
        self.announcer.observe(event, self.config.barge_in)
        self._observe(event)
        self._execute(self.machine.handle(event))

    def _observe(self, event: PipelineEvent) -> None:
        self.acknowledger.observe(event)
        self.recorder.observe(event)
        if isinstance(event, PlaybackEnded):
            timeline = self.recorder.turns.get(event.turn_id)
            if timeline is not None and timeline.confirmed:
                self._observe(TurnTimed(event.turn_id, copy.deepcopy(timeline)))
        if isinstance(event, Transcript):  # user words: DEBUG only, never in normal logs
            log.debug("turn %d: user said %r", event.turn_id, event.text)
        elif isinstance(event, TurnCommitted):
            log.debug("turn %d: user heard %r", event.turn_id, event.heard_text)
        for observer in self._observers:
            try:
                observer(event)
            except Exception:
                log.exception("observer failed")

    def _routes(self) -> dict[type, Callable[[Any], None]]:
        """Where each of the turn machine's commands goes: the one routing table."""
        return {
            Publish: self._publish,
            StartTurn: self._start_turn,
            ReleaseTurn: lambda c: self.playback.release(c.turn_id),
            CancelTurn: self._cancel_turn,
            Respond: self._respond,
            JudgeEndOfTurn: self.send,
            ResumePlayback: lambda _c: self.playback.resume(),
        }

    def _job_routes(self) -> dict[type, tuple[Callable[[Any], None], ...]]:
        """Which worker owns each stage job: the one table every job is handed through,
        from whichever thread makes it (the responder hands its chunks straight to the
        voice, with no hop through the controller). Microphone and speaker blocks are
        the listener's input stream, not jobs: they keep their own bounded path."""
        hear, respond = self.transcriber.inbox.put, self.responder.inbox.put
        speak, listen = self.synthesizer.inbox.put, self.listener.inbox.put
        return {
            StartTurn: (hear,),
            SetLanguages: (hear, speak),
            Respond: (respond,),
            WarmJob: (respond,),
            ExtractJob: (respond,),
            ReplyChunk: (speak,),
            EndOfReply: (speak,),
            SetVoice: (speak,),
            PrepareAcknowledgements: (speak,),
            JudgeEndOfTurn: (listen,),
            SetListening: (listen,),
        }

    def send(self, job: object) -> None:
        """Hand a stage job to the worker(s) that own it (any thread)."""
        for deliver in self._jobs[type(job)]:
            deliver(job)

    def _execute(self, commands: list[Command]) -> None:
        for command in commands:
            self._route[type(command)](command)

    def _publish(self, command: Publish) -> None:
        if isinstance(command.event, TurnCommitted):
            self._keep_in_its_conversation(command.event)
        self._observe(command.event)

    def _start_turn(self, command: StartTurn) -> None:
        self.live.activity += 1
        self._turn_keys[command.turn_id] = self.conversation_key
        self._turn_keys.pop(command.turn_id - 256, None)  # old turns' keys
        self.live.turn_id = command.turn_id
        self.playback.begin(command.turn_id, held=command.held)
        self.send(command)

    def _respond(self, command: Respond) -> None:
        language = self.reply_language(command.turn_id)
        messages = self._with_context(command.turn_id, command.messages)
        if len(self.languages) > 1:  # auto mode: say which language to answer in, per turn
            messages = with_memories(messages, reply_language_note(language))
        self.send(Respond(command.turn_id, messages, language))

    def reply_language(self, turn_id: int) -> str:
        """The language to answer turn ``turn_id`` in: the one heard when the persona
        speaks it, else the persona's main language (controller thread)."""
        heard = self._heard.get(turn_id)
        return heard if heard in self.languages else self.languages[0]

    def _cancel_turn(self, command: CancelTurn) -> None:
        if self.live.turn_id == command.turn_id:
            self.live.turn_id = None
        self.playback.cancel(command.turn_id)

    def _with_context(self, turn_id: int, messages: list[ChatMessage]) -> list[ChatMessage]:
        if self._context is None or not messages:
            return messages
        try:
            note = self._context(self.key_of(turn_id), messages[-1].content)
        except Exception:  # memories are a help, never a reason to miss a reply
            log.exception("context provider failed")
            return messages
        return with_memories(messages, note)

    def _keep_in_its_conversation(self, event: TurnCommitted) -> None:
        """A turn that started before a conversation switch was committed by the machine
        into the new conversation: take it out again (its own key still records it)."""
        if self.key_of(event.turn_id) != self.conversation_key:
            self.machine.conversation.retract(event.user_text, event.heard_text)
