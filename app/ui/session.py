"""Owns the running engines, pipeline and audio devices, and (re)starts them off the GUI thread.

Loading real engines takes seconds and opening audio devices can block, so both happen in a
BackgroundTask; the GUI gets ``progress``/``ready``/``failed`` signals. A restart (new
settings) stops the old pipeline in the same background task before building the new one.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.adapters.errors import EngineLoadError
from app.adapters.user_idle import idle_reader
from app.core.events import StageFailed
from app.core.pipeline import Engines, VoicePipeline
from app.engines import (
    EngineChoice,
    build_echo_canceller,
    build_engines,
    build_turn_detector,
    warm_engines,
)
from app.personas.model import Persona
from app.privacy import child_environment
from app.storage.check_ins import CheckIns
from app.storage.keeper import Keeper
from app.storage.settings import Settings, pipeline_config
from app.storage.tool_desk import ToolDesk, attach_tools
from app.storage.voice_prints import VoicePrintStore
from app.tools.mcp_hub import McpHub
from app.ui.notices import Notice
from app.ui.tasks import BackgroundTask, Report

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeviceProblem:
    """Posted when the audio devices cannot be opened at all (same shape as DeviceStatus)."""

    ok: bool
    message: str


@dataclass
class Running:
    pipeline: VoicePipeline
    devices: Any | None
    """The adapter's DeviceAudio (typed loosely: only start/stop are used)."""
    persona_id: str
    """The persona whose prompt the pipeline was built with."""
    tools: ToolDesk | None = None
    check_ins: CheckIns | None = None
    """The persona's check-ins after a long silence (``use`` on a persona switch)."""
    stop_offering: Callable[[], None] | None = None
    """Stops handing the MCP hub's tools to this pipeline's desk."""


def audio_disabled() -> bool:
    return os.environ.get("HANASU_NO_AUDIO") == "1"


def stop_running(running: Running | None) -> None:
    """Stop devices first (no more callbacks into the pipeline), then the pipeline."""
    if running is None:
        return
    if running.stop_offering is not None:
        running.stop_offering()
    if running.devices is not None:
        try:
            running.devices.stop()
        except Exception:
            log.exception("closing audio devices failed")
    if running.tools is not None:
        running.tools.stop()
    if running.check_ins is not None:
        running.check_ins.stop()
    running.pipeline.stop()


class Session(QObject):
    progress = Signal(str)
    ready = Signal(object)  # VoicePipeline
    failed = Signal(str)

    def __init__(self, post: Report, fake: bool, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._post = post
        self._fake = fake
        self._generation = 0
        self._task: BackgroundTask[Running] | None = None
        self.running: Running | None = None
        self.keeper: Keeper | None = None
        """Where committed exchanges are saved and memories come from (None: nowhere)."""
        self.mcp = McpHub(on_fault=lambda _server, message: post(Notice(message)),
                          env=child_environment())
        """The user's tool servers, for the app's whole run: a restart keeps them running;
        its ``save`` is set by the window (a changed tick is stored in the settings)."""

    @property
    def pipeline(self) -> VoicePipeline | None:
        return self.running.pipeline if self.running else None

    @property
    def persona_id(self) -> str | None:
        return self.running.persona_id if self.running else None

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done

    def start(self, settings: Settings, persona: Persona) -> None:
        """Build (or rebuild) everything for ``settings`` in the background."""
        self._generation += 1
        generation = self._generation
        old, self.running = self.running, None

        def work(report: Report) -> Running:
            stop_running(old)
            return self._build(settings, persona, report)

        task: BackgroundTask[Running] = BackgroundTask(work, "engine-loader", self)
        task.progress.connect(lambda message: self._progress(generation, message))
        task.finished.connect(lambda running: self._finished(generation, running))
        task.failed.connect(lambda error: self._failed(generation, error))
        self._task = task
        task.start()

    def shutdown(self) -> None:
        """Stop everything now (at exit; blocking here is fine)."""
        self._generation += 1
        if self._task is not None and not self._task.done:
            self._task.join(10)
            self._task = None
        stop_running(self.running)
        self.running = None
        self.mcp.close()

    # ---- background thread -----------------------------------------------------------

    def _build(self, settings: Settings, persona: Persona, report: Report) -> Running:
        choice = EngineChoice.from_settings(settings, fake=self._fake)
        if settings.tts_voice is None:
            from dataclasses import replace

            choice = replace(
                choice,
                tts_voice=persona.voice.kokoro,
                tts_speed=settings.tts_speed * persona.voice.speed,
            )
        report("Loading engines…")
        engines = build_engines(choice, progress=lambda m: report(m + "…"))
        if not self._fake:
            report("Warming up…")
            self._warm(engines, persona)
        echo = None
        if settings.echo_cancellation and not self._fake:
            report("Starting echo cancellation…")
            try:
                echo = build_echo_canceller()
            except EngineLoadError as exc:  # still usable with headphones: warn, go on
                log.warning("echo cancellation unavailable: %s", exc)
        detector = build_turn_detector() if settings.smart_turn and not self._fake else None
        pipeline = VoicePipeline(
            engines,
            persona.full_system_prompt(),
            pipeline_config(settings),
            echo=echo,
            turn_detector=detector,
        )
        pipeline.add_observer(self._post)
        prints = VoicePrintStore().all()  # Hanasu → Voices
        pipeline.use_voice_prints(prints)
        pipeline.learn_voice(settings.learn_voice and not prints)
        if self.keeper is not None:  # the window loads the conversation on ready
            pipeline.add_observer(self.keeper.observer(pipeline))
            pipeline.set_context_provider(self.keeper.context)
        tools = (attach_tools(pipeline, self.keeper.db, on_ring=self._post)
                 if self.keeper is not None else None)  # rings shown in the window too
        if tools is not None:
            tools.on_question = self._post  # the window asks too
        self.mcp.configure(settings.mcp_servers)  # unchanged servers keep running
        stop_offering = (self.mcp.offer(partial(tools.set_extra_tools, confirms=self.mcp))
                         if tools is not None else None)
        check_ins = CheckIns(pipeline, persona.checkin, idle=idle_reader())
        pipeline.add_observer(check_ins.observe)
        pipeline.start()
        check_ins.start()
        pipeline.set_muted(settings.muted)
        devices = None if audio_disabled() else self._open_devices(settings, pipeline, report)
        return Running(pipeline, devices, persona.id, tools, check_ins, stop_offering)

    def use_persona(self, persona: Persona) -> None:
        """The window switched persona: its check-in settings from now on."""
        running = self.running
        if running is not None and running.check_ins is not None:
            running.check_ins.use(persona.checkin)

    def _warm(self, engines: Engines, persona: Persona) -> None:
        """Warm every engine. A language model server that is down or refusing is not
        fatal: the window says so in one line and each turn tries the server again, so
        the conversation resumes by itself when the server is back."""
        try:
            warm_engines(engines, persona.full_system_prompt())
        except EngineLoadError as exc:
            from app.adapters.openai_errors import LlmServerError

            if not isinstance(exc, LlmServerError):
                raise
            log.warning("%s", exc)
            self._post(StageFailed("llm", str(exc), None))

    def _open_devices(
        self, settings: Settings, pipeline: VoicePipeline, report: Report
    ) -> Any | None:
        report("Opening microphone and speaker…")
        try:
            from app.adapters import audio_devices
        except ImportError as exc:  # adapter not available in this build
            self._post(DeviceProblem(False, f"Audio devices are unavailable: {exc}"))
            return None
        try:
            # the output callback only copies from a buffer the pipeline keeps filled
            ring = pipeline.device_output(pipeline.engines.tts.sample_rate // 100)
            devices = audio_devices.DeviceAudio(
                input_device=settings.input_device,
                output_device=settings.output_device,
                output_rate=pipeline.engines.tts.sample_rate,
                push=pipeline.push_audio,
                # a 16 kHz microphone's blocks are copied from the callback into the
                # listener's ring (no lock, no allocation), without the forwarder's hop
                push_now=pipeline.push_audio,
                pull=pipeline.pull_audio,
                on_status=self._post,
                read_into=ring.read_into,
                # the speaker stream pauses while there is nothing to play, and the
                # buffer's writer starts it again as soon as a reply opens
                output_idle=ring.idle,
            )
            ring.on_refill = devices.wake_output
            devices.start()
        except Exception as exc:
            log.warning("cannot open audio devices: %s", exc)
            self._post(DeviceProblem(False, f"Cannot open the audio devices: {exc}"))
            return None
        return devices

    # ---- GUI thread ------------------------------------------------------------------

    def _progress(self, generation: int, message: object) -> None:
        if generation == self._generation:
            self.progress.emit(str(message))

    def _finished(self, generation: int, running: Running) -> None:
        if generation != self._generation:  # superseded by a newer start: discard it
            BackgroundTask(lambda _r: stop_running(running), "stale-stop", self).start()
            return
        self.running = running
        self.ready.emit(running.pipeline)

    def _failed(self, generation: int, error: object) -> None:
        if generation != self._generation:
            return
        from app.adapters.errors import EngineLoadError
        from app.models.errors import ModelError

        if isinstance(error, EngineLoadError | ModelError):
            message = str(error)
        else:
            log.error(
                "starting the voice engines failed",
                exc_info=error if isinstance(error, BaseException) else None,
            )
            message = f"Could not start the voice engines: {error}"
        self.failed.emit(message)
