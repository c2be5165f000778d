"""The voice loop as the app sees it: a facade whose every control method posts a message.

``runtime.wiring`` builds the stages, ``runtime.router`` hands jobs between them,
``runtime.controller`` runs the turn machine on its own thread and ``runtime.telemetry_hub``
feeds the recorder and observers beside it. This class starts and stops them, routes what the
stages publish (decisions to the controller, telemetry to the hub), connects the devices.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from app.core.acknowledgement import Acknowledger
from app.core.events import FloatAudio, PipelineEvent
from app.core.listener import Listener
from app.core.listener_jobs import SetListening
from app.core.metrics import TimelineRecorder
from app.core.output_ring import OutputFeeder, OutputRing
from app.core.playback import PlaybackQueue
from app.core.ports import EchoCanceller, TurnDetector
from app.core.runtime.config import (
    Engines,
    MonotonicClock,
    PipelineConfig,
    llm_language_notice,
)
from app.core.runtime.controller import Controller
from app.core.runtime.idleness import IdleSignal
from app.core.runtime.messages import (
    Announce,
    Extract,
    LoadConversation,
    Say,
    SetMuted,
    Shutdown,
    TypedRequest,
    UsePersona,
    UseVoicePrints,
)
from app.core.runtime.router import JobRouter, StageJob
from app.core.runtime.telemetry_hub import Observer, TelemetryHub
from app.core.runtime.wiring import build_stages
from app.core.stage_jobs import LearnVoice, UseTools, WarmJob
from app.core.stages import Responder
from app.core.synthesizer import Synthesizer
from app.core.telemetry import TelemetryEvent
from app.core.tool_rounds import ToolRunner
from app.core.transcriber import Transcriber
from app.core.turn import TurnMachine
from app.core.turn_history import ContextProvider, ReplyScript
from app.core.voice_gate import VoicePrint
from app.core.worker import LiveTurn
from app.tools.spec import ToolSpec

__all__ = [
    "ContextProvider",
    "Engines",
    "MonotonicClock",
    "Observer",
    "PipelineConfig",
    "VoicePipeline",
    "llm_language_notice",
]


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
        self.echo = echo
        self._router = JobRouter()
        self.telemetry = TelemetryHub(self.config.timelines_kept)
        self.stages = build_stages(engines, self.config, self.clock, self._post, self._router,
                                   echo, turn_detector)
        self.controller = Controller(self.stages, self._router, engines.llm, system_prompt,
                                     self.config, self.clock, self.telemetry)
        self._feeder: OutputFeeder | None = None
        self.idle = IdleSignal(self.is_idle, self.clock.now)
        """Published idleness: ``self.idle.wait_idle(...)`` instead of polling ``is_idle``."""
        for worker in self.stages.workers:
            worker.on_settled = self.idle.changed
        self.controller.on_settled = self.idle.changed
        self.telemetry.on_settled = self.idle.changed
        self._thread = threading.Thread(target=self.controller.run, name="controller",
                                        daemon=True)

    def _post(self, event: PipelineEvent) -> None:
        """What the stages publish to: telemetry beside the decisions, every other event
        to the controller's inbox (made after the stages)."""
        if isinstance(event, TelemetryEvent):
            self.telemetry.post(event)
        else:
            self.controller.post(event)

    # ---- what the app and the tests read ----------------------------------------------

    @property
    def machine(self) -> TurnMachine:
        return self.controller.machine

    @property
    def recorder(self) -> TimelineRecorder:
        return self.telemetry.recorder

    @property
    def acknowledger(self) -> Acknowledger:
        return self.controller.acknowledger

    @property
    def live(self) -> LiveTurn:
        return self.stages.live

    @property
    def playback(self) -> PlaybackQueue:
        return self.stages.playback

    @property
    def listener(self) -> Listener:
        return self.stages.listener

    @property
    def transcriber(self) -> Transcriber:
        return self.stages.transcriber

    @property
    def responder(self) -> Responder:
        return self.stages.responder

    @property
    def synthesizer(self) -> Synthesizer:
        return self.stages.synthesizer

    # ---- lifecycle ------------------------------------------------------------------

    def add_observer(self, observer: Observer) -> None:
        self.telemetry.observers.append(observer)

    def start(self) -> None:
        for worker in self.stages.workers:
            worker.start()
        # The persona prefix is queued before the controller runs, so a conversation
        # loaded before start() has its (longer) warm-up queued after it, never before:
        # a later system-only warm would evict the history from the cache.
        self.warm()
        self.telemetry.start()
        self._thread.start()

    def stop(self) -> None:
        if self._feeder is not None:
            self._feeder.stop()
        self.stages.live.turn_id = None
        self.controller.post(Shutdown())
        self._thread.join(5)
        for worker in self.stages.workers:
            worker.stop()
        self.telemetry.stop()

    @property
    def running(self) -> bool:
        """Whether the controller thread is still alive (False once stop() has returned)."""
        return self._thread.is_alive()

    def warm(self) -> None:
        """Evaluate the persona prefix in the background so the first turn is warm."""
        self.send(WarmJob(self.machine.conversation.system_messages()))

    # ---- audio device callbacks (never block) ---------------------------------------

    def push_audio(self, samples: FloatAudio, captured_at: float | None = None) -> None:
        """A captured block, from the input callback or a file: only copied into the
        listener's preallocated ring (no lock, no allocation, no event). ``captured_at``
        (its last sample, on ``self.clock``) defaults to now: the listener maps the
        microphone's samples onto the one clock from it. A full ring drops the block."""
        self.stages.listener.mic.write(
            samples, self.clock.now() if captured_at is None else captured_at)

    @property
    def dropped_mic_blocks(self) -> int:
        return self.stages.listener.mic.dropped

    def device_output(self, block: int) -> OutputRing:
        """For a real-time output callback: a ring the pipeline keeps filled from its own
        thread, so the callback only copies (``OutputRing.read_into``)."""
        if self._feeder is None:
            playback = self.stages.playback
            self._feeder = OutputFeeder(
                self.pull_audio, self.clock.now, playback.sample_rate, block,
                lead_blocks=4, has_work=lambda: not playback.idle(), wake=playback.wake)
            self._feeder.start()
        return self._feeder.ring

    def pull_audio(self, frames: int, plays_at: float | None = None) -> FloatAudio:
        """The next block for the speaker; ``plays_at`` (its first sample, on
        ``self.clock``) defaults to now: playback events are stamped on the one clock."""
        playback = self.stages.playback
        at = self.clock.now() if plays_at is None else plays_at
        played = playback.pull(frames, at)
        echo_in = self.stages.listener.echo_in
        if echo_in is not None and playback.speaking:  # the canceller pads silence
            echo_in.played.write(played, at + played.size / playback.sample_rate)
        return played

    # ---- control from other threads: each posts one message -------------------------

    def send(self, job: StageJob) -> None:
        """Hand a stage job to the worker(s) that own it (any thread)."""
        self._router.send(job)

    def set_muted(self, muted: bool) -> None:
        self.send(SetListening(muted, self.clock.now()))
        self.controller.post(SetMuted(muted))

    def say(self, text: str) -> None:
        """Speak a fixed text (a persona's greeting) like a reply: the user talking over
        it stops it, and it is not added to the conversation. Ignored while a turn is
        live; an empty text stops what is being said."""
        self.controller.post(Say(text))

    def announce(self, text: str) -> None:
        """Say something first (a timer that rang): queued until nobody is talking and
        nothing plays, then spoken like a greeting; shown as a notice while muted."""
        self.controller.post(Announce(text))

    def use_tools(self, specs: Sequence[ToolSpec], run: ToolRunner | None) -> None:
        """Offer ``specs`` to a model that calls tools in its own format (Gemma 4), from the
        next reply on; ``run`` runs its calls (off the model's thread, bounded in time)."""
        self.send(UseTools(tuple(specs), run))

    def set_reply_script(self, script: ReplyScript | None) -> None:
        """Called on the controller thread before each reply with (turn id, the user's
        words, the reply language): a text it returns is the reply, spoken and committed
        as the model's would be (built-in tools); None asks the model."""
        self.controller.history.script = script

    def type_request(self, text: str) -> None:
        """Words typed in the window (no microphone, a quiet office): answered aloud and
        shown like a spoken request, and kept in the conversation; a reply still going is
        interrupted as if talked over."""
        self.controller.post(TypedRequest(text))

    def use_persona(self, persona: UsePersona) -> None:
        """Switch persona: its prompt (a fresh conversation, warmed), languages, voice,
        sampling, reply length and late-answer phrases, each applied on its own thread."""
        self.controller.post(persona)

    def use_voice_prints(self, prints: Sequence[VoicePrint]) -> None:
        """The enrolled voices; others are heard only when they say the persona's name."""
        self.controller.post(UseVoicePrints(tuple(prints)))

    def learn_voice(self, on: bool) -> None:
        """Learn the user's voice from their requests while nobody is enrolled (with their
        consent); a ``VoiceLearnt`` event brings the print, for ``use_voice_prints``."""
        self.send(LearnVoice(on))

    def load_conversation(
        self, prompt: str, exchanges: Sequence[tuple[str, str]] = (), key: object = None
    ) -> None:
        """Switch to a persona's conversation with its history; the whole prefix, history
        included, is warmed in the background. ``key`` is the caller's name for it:
        exchanges committed from now on carry it (``TurnCommitted.conversation_key``), and a turn
        still finishing from before the switch is committed into its own conversation."""
        self.controller.post(LoadConversation(prompt, tuple(exchanges), key))

    def set_context_provider(self, provider: ContextProvider | None) -> None:
        """Called on the controller thread before each reply; what it returns is put in
        front of the user's words in the prompt (never in the history)."""
        self.controller.history.context = provider

    def extract(self, key: object, instruction: str, done: Callable[[str | None], None]) -> None:
        """Background LLM work for an idle app (the memory extraction): ``done`` gets the
        model's output on the LLM thread, or None when it was skipped or cancelled (a turn
        live or queued, the user speaking, another conversation shown)."""
        self.controller.post(Extract(key, instruction, done))

    def reply_language(self, turn_id: int) -> str:
        return self.controller.history.reply_language(turn_id)

    def is_idle(self) -> bool:
        """No speech in progress, no live turn, nothing queued or playing (a look now;
        to wait for it, ``self.idle.wait_idle``)."""
        machine = self.controller.machine
        return (
            machine.live_turn_id is None
            and not self.controller.history.awaiting_commit
            and self.stages.playback.idle()
            and not self.stages.listener.endpointer.in_speech
            and not self.controller.busy()
            and not self.telemetry.busy()
            and not self.stages.busy()
        )
