"""The controller: one thread, one typed inbox, the turn machine, and every deadline.

Everything the stages report and everything the facade asks for arrives here as one
``ControlMessage``, is handled by one exhaustive ``match``, and the turn machine's commands
are executed by another. Deadlines (the late-answer acknowledgement) come from one
``tick(now)`` after every message and whenever the nearest deadline passes.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable
from typing import assert_never

from app.core.acknowledgement import Acknowledger
from app.core.announce import Announcer, FirstWords
from app.core.conversation import Conversation, history_budget_chars
from app.core.events import (
    PipelineEvent,
    PlaybackEnded,
    SpeechStarted,
    Transcript,
    TurnCommitted,
)
from app.core.languages import base_language
from app.core.ports import BudgetsPrompt, HasModelFile, LanguageModel
from app.core.runtime.config import MonotonicClock, PipelineConfig
from app.core.runtime.messages import (
    Announce,
    ControlMessage,
    Extract,
    LoadConversation,
    Say,
    SetMuted,
    Shutdown,
    TypedRequest,
    UsePersona,
    UseVoicePrints,
)
from app.core.runtime.router import JobRouter
from app.core.runtime.telemetry_hub import TelemetryHub
from app.core.runtime.voices import EnrolledVoices
from app.core.runtime.wiring import Stages
from app.core.stage_jobs import ExtractJob, SetLanguages, SetReplyOptions, SetVoice, WarmJob
from app.core.telemetry import EngineNotice
from app.core.tool_rounds import ToolWait
from app.core.turn import TurnMachine
from app.core.turn_commands import (
    CancelTurn,
    Command,
    JudgeEndOfTurn,
    Publish,
    ReleaseTurn,
    Respond,
    ResumePlayback,
    StartTurn,
)
from app.core.turn_end import EndOfTurnJudge
from app.core.turn_history import TurnHistory
from app.core.turn_opening import TurnOpener
from app.core.turn_phase import Phase

log = logging.getLogger(__name__)


def history_budget(llm: LanguageModel, system_prompt: str) -> int:
    """From the model's prompt budget (n_ctx minus a reply) where it reports one."""
    try:
        tokens = llm.prompt_budget() if isinstance(llm, BudgetsPrompt) else None
    except Exception:  # a server that is down: the default budget
        tokens = None
    if not isinstance(tokens, int):
        return Conversation.max_history_chars
    return history_budget_chars(tokens, system_prompt)


class Controller:
    """Runs the turn machine on its own thread and carries out what it decides."""

    def __init__(
        self,
        stages: Stages,
        router: JobRouter,
        llm: LanguageModel,
        system_prompt: str,
        config: PipelineConfig,
        clock: MonotonicClock,
        telemetry: TelemetryHub,
    ) -> None:
        self.stages, self.router, self.llm = stages, router, llm
        self.config, self.clock = config, clock
        self.inbox: queue.Queue[ControlMessage] = queue.Queue()
        self.telemetry = telemetry
        self.history = TurnHistory(Conversation(system_prompt, history_budget(llm, system_prompt)))
        self.machine = TurnMachine(
            self.history,
            speculative=config.speculative,
            barge_in=stages.barge_in,
            opener=TurnOpener(config.endpoint.sample_rate),
            end_of_turn=EndOfTurnJudge(config.words_end_turns),
        )
        self.announcer = Announcer(stages.live, stages.playback, router.send, clock)
        self.first_words = FirstWords(self.announcer)
        self.acknowledger = Acknowledger(stages.playback, stages.live.is_live, self._observe)
        self.voices = EnrolledVoices(router, self.machine, stages.transcriber.voices.can_check)
        self._handling = False
        self.on_settled: Callable[[], None] = lambda: None
        """Called when the inbox has been worked off (the pipeline's ``IdleSignal``)."""

    def busy(self) -> bool:
        """A message is queued or being handled (its jobs may not have reached the stages)."""
        return self._handling or not self.inbox.empty()

    def post(self, message: ControlMessage) -> None:
        """From any thread; never blocks."""
        self.inbox.put_nowait(message)

    # ---- the loop -------------------------------------------------------------------

    def run(self) -> None:
        while True:
            try:  # wakes for the nearest deadline too
                message: ControlMessage | None = self.inbox.get(
                    timeout=self.wait_s(self.clock.now()))
            except queue.Empty:
                message = None
            if isinstance(message, Shutdown):
                return
            self._handling = True
            try:
                if message is not None:
                    # a deadline that passed before this message counts first: speech that
                    # went on over a paused reply is a barge-in before its next event
                    self.execute(self.machine.tick(self.clock.now()))
                    self.handle(message)
                self.tick(self.clock.now())
            except Exception:
                log.exception("controller failed on %r", type(message).__name__)
            finally:
                self._handling = False
            if message is not None and self.inbox.empty():
                self.on_settled()

    def wait_s(self, now: float) -> float | None:
        """Seconds until the nearest deadline (None: none is set)."""
        waits = [self.acknowledger.wait_s(now),
                 self.first_words.wait_s()]
        deadline = self.machine.next_deadline()
        if deadline is not None:
            waits.append(max(0.0, deadline - now))
        return min((w for w in waits if w is not None), default=None)

    def tick(self, now: float) -> None:
        """Every deadline: the barge-in confirmation and the late-answer acknowledgement."""
        self.execute(self.machine.tick(now))
        self.acknowledger.tick(now)
        self._announce_when_quiet()

    def _announce_when_quiet(self) -> None:
        phase = self.machine.phase
        quiet = phase is Phase.IDLE and self.stages.playback.idle()
        shown = self.first_words.speak(quiet, muted=phase is Phase.MUTED)
        if shown is not None:
            self.telemetry.post(EngineNotice(shown, self.clock.now()))

    def handle(self, message: ControlMessage) -> None:
        now = self.clock.now()
        match message:
            case SetMuted(muted=muted):
                self.execute(self.machine.set_muted(muted, now))
            case Say(text=text):
                if self.machine.live_turn_id is None or not text:
                    self.announcer.say(text)
            case Announce(text=text):
                self.first_words.add(text)
            case TypedRequest(text=text):
                self.stages.live.activity += 1  # background LLM work stops for the user
                self.announcer.say("")  # a greeting still going stops for the request
                self.execute(self.machine.typed(text, now))
            case LoadConversation():
                self._load(message, now)
            case UsePersona():
                self._use_persona(message, now)
            case UseVoicePrints(prints=prints):
                self.voices.use(prints=prints)
            case Extract():
                self._extract(message)
            case Shutdown():
                pass  # the loop returns before handling it
            case _:
                self._on_event(message)

    def _on_event(self, event: PipelineEvent) -> None:
        if isinstance(event, SpeechStarted):
            self.stages.live.activity += 1  # background LLM work stops for the user's words
        if isinstance(event, Transcript) and event.language is not None:
            self.history.language_heard(event.turn_id, event.language)
        self.announcer.observe(event, self.machine.barge_in.enabled)
        if isinstance(event, PlaybackEnded):
            heard = self.first_words.ended(event)
            if heard:  # said first and heard: kept like a reply
                self.history.conversation.said_first(heard)
                self._observe(TurnCommitted(event.turn_id, "", heard, self.history.key))
        self._observe(event)
        self.execute(self.machine.handle(event))

    def _load(self, message: LoadConversation, now: float) -> None:
        if self.machine.live_turn_id is not None:
            self.execute(self.machine.cancel_live(now, "persona changed"))
        self.history.switch(Conversation(
            message.prompt, history_budget(self.llm, message.prompt), list(message.exchanges)),
            message.key)
        self.router.send(WarmJob(self.machine.conversation.messages_for("")[:-1]))

    def _warm_history(self) -> None:
        """An exchange joined the history: have the model evaluate it while nobody talks,
        so the next turn evaluates only its own words (a model run here: a server is not
        sent an extra request each turn). The prompt keeps the reply as heard
        (not as generated), a memory note only on the newest request, and an old block of
        the history dropped past its budget: each left the next turn re-evaluating what
        came after it, a reply's worth of tokens or, once the budget was hit, all of it."""
        messages = self.machine.conversation.messages_for("")[:-1]
        self.router.send(WarmJob(messages, after_reply=True))

    def _use_persona(self, message: UsePersona, now: float) -> None:
        if message.prompt is not None:
            self._load(LoadConversation(message.prompt), now)
        languages = tuple(dict.fromkeys(base_language(code) for code in message.languages))
        self.history.languages = languages or ("en",)
        self.router.send(SetLanguages(self.history.languages))  # the recognizer, the voices
        if message.voice is not None:
            self.router.send(SetVoice(message.voice, message.speed))
        self.router.send(SetReplyOptions(
            message.temperature, message.max_sentences or self.config.max_reply_sentences,
            ToolWait(message.acknowledgement_after_s, message.tool_waiting_lines)))
        self.router.send(self.acknowledger.job(  # after the voice: made in the new one
            message.acknowledgement_phrases, message.acknowledgement_after_s,
            self.history.languages[0]))
        self.voices.use(names=message.names)

    def _extract(self, message: Extract) -> None:
        conversation = self.machine.conversation
        if (self.machine.live_turn_id is not None or self.history.awaiting_commit
                or message.key not in (None, self.history.key) or not conversation.exchanges):
            message.done(None)
            return
        messages = conversation.messages_for(message.instruction)
        self.router.send(ExtractJob(messages, self.stages.live.activity, message.done))

    def _observe(self, event: PipelineEvent) -> None:
        """A control event the machine has acted on (or published): to the late-answer
        rule, then beside the decisions to the recorder and the observers."""
        self.acknowledger.observe(event)
        if isinstance(event, Transcript):  # user words: DEBUG only, never in normal logs
            log.debug("turn %d: user said %r", event.turn_id, event.text)
        elif isinstance(event, TurnCommitted):
            log.debug("turn %d: user heard %r", event.turn_id, event.heard_text)
            if self.config.warm_history and isinstance(self.llm, HasModelFile):
                self._warm_history()
        self.telemetry.post(event)

    # ---- the turn machine's commands ------------------------------------------------

    def execute(self, commands: list[Command]) -> None:
        playback = self.stages.playback
        for command in commands:
            match command:
                case Publish(event=event):
                    self._observe(event)
                case StartTurn():
                    self._start_turn(command)
                case ReleaseTurn(turn_id=turn_id):
                    playback.release(turn_id)
                case CancelTurn(turn_id=turn_id):
                    if self.stages.live.turn_id == turn_id:
                        self.stages.live.turn_id = None
                    playback.cancel(turn_id)
                case Respond():
                    self._respond(command)
                case JudgeEndOfTurn():
                    self.router.send(command)
                case ResumePlayback():
                    playback.resume()
                case _:
                    assert_never(command)

    def _start_turn(self, command: StartTurn) -> None:
        live = self.stages.live
        live.activity += 1
        self.history.turn_started(command.turn_id)
        live.turn_id = command.turn_id
        self.stages.playback.begin(command.turn_id, held=command.held)
        self.router.send(command)

    def _respond(self, command: Respond) -> None:
        scripted = self.history.scripted_reply(
            command.turn_id, command.messages, self.history.reply_language(command.turn_id))
        messages, language = self.history.prompt(command.turn_id, command.messages)
        self.router.send(Respond(command.turn_id, messages, language, scripted))
