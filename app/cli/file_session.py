"""The voice loop on files: an input WAV as the microphone, the app's own speaker path
into a track, on one real-time timeline (what ``hanasu run`` and the benchmarks drive).

The microphone file is paced by the wall clock in 32 ms blocks and the speaker track is
read from the same output ring the app's device callback reads, so the reply's position in
the track is the voice-to-voice latency a user would hear.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from app.adapters.file_audio import EchoRoom, FileMicrophone, FileSpeaker
from app.core.events import FloatAudio, PipelineEvent, StageFailed
from app.core.metrics import TurnTimeline
from app.core.pipeline import Engines, MonotonicClock, PipelineConfig, VoicePipeline
from app.core.ports import EchoCanceller, TurnDetector
from app.core.telemetry import EngineNotice, ReplyFailed, VoiceLearnt
from app.core.voice_gate import VoicePrint
from app.personas import Persona
from app.personas.switch import persona_switch
from app.personas.text import plain_text
from app.storage.check_ins import CheckIns
from app.storage.keeper import Keeper, attach
from app.storage.tool_desk import attach_tools
from app.tools.confirmation import PendingCall
from app.tools.mcp_hub import McpHub

log = logging.getLogger(__name__)

IDLE_SETTLE_S = 0.25
"""How long the pipeline must stay idle after the input before a run is finished."""


@dataclass(frozen=True)
class RoomSimulation:
    delay_s: float = 0.08
    gain: float = 0.5


@dataclass
class RunResult:
    output: FloatAudio
    sample_rate: int
    turns: list[TurnTimeline]
    input_seconds: float
    speculative_cancelled: int
    barge_in_stops: list[float] = field(default_factory=list)
    """Seconds from each voice onset over a reply to the reply pausing."""
    reply_pauses: list[tuple[float, float]] = field(default_factory=list)
    """(voice onset, reply paused) for each of them, on the input file's clock."""
    resumed_after_pause: int = 0
    not_the_user: int = 0
    other_voice: int = 0
    """Turns dropped as a voice that is not enrolled (``voice_gate``)."""
    learnt: list[VoicePrint] = field(default_factory=list)
    """With ``learn_voice``: the voice learnt from the requests, used from then on."""
    interrupted: bool = False
    """Stopped early by a signal: ``output`` holds what was played until then."""
    dropped: list[TurnTimeline] = field(default_factory=list)
    """Turns dropped before they were confirmed (speculative ones, echo, "mm-hm")."""
    failures: list[str] = field(default_factory=list)
    """What failed while running (a reply the model could not give, a stage that broke),
    one line each, as said on stderr; any makes the run's exit status 1."""


def run_file(
    engines: Engines,
    persona: Persona,
    audio: FloatAudio,
    config: PipelineConfig | None = None,
    max_wait_s: float = 90.0,
    echo: EchoCanceller | None = None,
    room: RoomSimulation | None = None,
    turn_detector: TurnDetector | None = None,
    stop: threading.Event | None = None,
    keeper: Keeper | None = None,
    new_conversation: bool = False,
    mcp: McpHub | None = None,
    on_question: Callable[[PendingCall], None] | None = None,
    voice_prints: Sequence[VoicePrint] = (),
    learn_voice: bool = False,
) -> RunResult:
    """Stream ``audio`` through a fresh pipeline in real time; return the speaker track.

    Setting ``stop`` ends the run early (Ctrl-C): the result then holds what was played
    so far and has ``interrupted`` set. With a ``keeper`` the persona's saved
    conversation is resumed (or a new one started) and every exchange is saved to it;
    the ``mcp`` hub's ticked tools are offered beside the built-ins (both need a keeper),
    and ``on_question`` is told of each call that waits for the user's yes. With
    ``voice_prints`` other voices are heard only when they call the persona by name;
    with ``learn_voice`` (and none) the user's voice is learnt from the requests and used
    from then on, as in the app.
    """
    stop = stop if stop is not None else threading.Event()
    clock = MonotonicClock()
    pipeline = VoicePipeline(
        engines, persona.full_system_prompt(), config, clock, echo, turn_detector
    )
    # its languages, voice and "Hmm," phrases, made ready before the clock starts
    pipeline.use_persona(persona_switch(persona, fresh_conversation=False))
    if voice_prints:
        pipeline.use_voice_prints(voice_prints)
    learnt = _LearntVoices(pipeline, learn_voice and not voice_prints)
    pipeline.add_observer(learnt)
    problems = _Problems()
    pipeline.add_observer(problems)
    speaker = FileSpeaker(engines.tts.sample_rate, clock)
    echo_room = EchoRoom(speaker, room.delay_s, room.gain) if room else None
    mic = FileMicrophone(audio, clock, room=echo_room)
    desk = None
    check_ins = CheckIns(pipeline, persona.checkin)
    pipeline.add_observer(check_ins.observe)
    if keeper is not None:
        attach(keeper, pipeline, persona.id, persona.full_system_prompt(), new_conversation)
        desk = attach_tools(pipeline, keeper.db)
        desk.on_question = on_question
    stop_offering = (mcp.offer(partial(desk.set_extra_tools, confirms=mcp)) if mcp and desk
                     else (lambda: None))
    pipeline.start()
    _wait_until_warm(pipeline, stop)
    log.info("streaming %.1f s of input as the microphone", mic.duration)
    clock.start()
    # the app's own output path: the feeder keeps the ring filled, the speaker only copies
    speaker.start(pipeline.device_output(engines.tts.sample_rate // 100).read_into)
    mic.start(pipeline.push_audio)
    check_ins.start()
    try:
        _wait_for_replies(pipeline, clock, mic.duration, max_wait_s, stop)
    finally:
        check_ins.stop()
        stop_offering()
        if desk is not None:
            desk.stop()
        mic.stop()
        speaker.stop()
        pipeline.stop()
    track = speaker.recording()
    interrupted = stop.is_set()
    return RunResult(
        output=track if interrupted else _trim(track, engines.tts.sample_rate, mic.duration),
        sample_rate=engines.tts.sample_rate,
        turns=pipeline.recorder.confirmed_turns(),
        input_seconds=mic.duration,
        speculative_cancelled=pipeline.recorder.speculative_cancelled,
        barge_in_stops=pipeline.recorder.barge_in_stops,
        reply_pauses=pipeline.recorder.reply_pauses,
        resumed_after_pause=pipeline.recorder.resumed_after_pause,
        not_the_user=pipeline.recorder.not_the_user,
        other_voice=pipeline.recorder.other_voice,
        learnt=learnt.voices,
        dropped=pipeline.recorder.dropped_turns(),
        interrupted=interrupted,
        failures=problems.failures(),
    )


class _LearntVoices:
    """A voice learnt mid-run is used at once (and kept in the result), as the app does."""

    def __init__(self, pipeline: VoicePipeline, learn: bool) -> None:
        self.pipeline, self.voices = pipeline, list[VoicePrint]()
        pipeline.learn_voice(learn)

    def __call__(self, event: PipelineEvent) -> None:
        if isinstance(event, VoiceLearnt):
            self.voices.append(event.voice)
            self.pipeline.use_voice_prints(self.voices)


class _Problems:
    """Says on stderr, once per distinct line, what went wrong while running: a voice that
    fell back (a notice), a reply the language model could not give, a stage that failed
    (those two are failures: the run could not do all of its job)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._said: set[str] = set()
        self._failures: list[str] = []

    def __call__(self, event: PipelineEvent) -> None:
        if isinstance(event, EngineNotice):
            self._say(event.message, failure=False)
        elif isinstance(event, ReplyFailed):
            self._say(f"the reply failed (the persona apologised): {event.message}", failure=True)
        elif isinstance(event, StageFailed):
            self._say(f"the {event.stage} stage failed: {event.message}", failure=True)

    def _say(self, line: str, failure: bool) -> None:
        line = plain_text(line)  # a server's words: no terminal escapes, no bidi overrides
        with self._lock:
            if failure:
                self._failures.append(line)
            if line in self._said:
                return
            self._said.add(line)
        print(f"hanasu: {line}", file=sys.stderr)

    def failures(self) -> list[str]:
        with self._lock:
            return list(self._failures)


def _wait_until_warm(
    pipeline: VoicePipeline, stop: threading.Event, timeout_s: float = 120.0
) -> None:
    """The persona's prefix evaluated and its languages' recognizer and voices loaded."""
    stages = (pipeline.controller, pipeline.responder, pipeline.transcriber,
              pipeline.synthesizer)
    deadline = time.monotonic() + timeout_s
    while (any(stage.busy() for stage in stages) and time.monotonic() < deadline
           and not stop.is_set()):
        time.sleep(0.01)


def _wait_for_replies(
    pipeline: VoicePipeline,
    clock: MonotonicClock,
    input_s: float,
    max_wait_s: float,
    stop: threading.Event,
) -> None:
    if stop.wait(max(0.0, input_s - clock.now())):  # the whole input first
        return
    finished = pipeline.idle.wait_idle(IDLE_SETTLE_S, input_s + max_wait_s - clock.now(), stop)
    if not finished and not stop.is_set():
        log.warning("gave up waiting for the reply after %.0f s", max_wait_s)


def _trim(track: FloatAudio, rate: int, input_s: float) -> FloatAudio:
    """At least as long as the input, and until the last audible sample (+0.2 s)."""
    audible = np.flatnonzero(np.abs(track) > 1e-4)
    last = int(audible[-1]) + 1 if audible.size else 0
    length = max(int(np.ceil(input_s * rate)), last + int(0.2 * rate))
    if track.size < length:
        track = np.concatenate([track, np.zeros(length - track.size, dtype=np.float32)])
    return track[:length]


def timeline_json(result: RunResult, input_path: Path) -> dict[str, object]:
    return {
        "input": str(input_path),
        "input_seconds": result.input_seconds,
        "output_sample_rate": result.sample_rate,
        "speculative_cancelled": result.speculative_cancelled,
        "barge_in_stops": result.barge_in_stops,
        "resumed_after_pause": result.resumed_after_pause,
        "not_the_user": result.not_the_user,
        "other_voice": result.other_voice,
        "reply_pauses": [{"voice_onset": onset, "paused": paused}
                         for onset, paused in result.reply_pauses],
        "turns": [turn.as_dict() for turn in result.turns],
        "dropped": [turn.as_dict() for turn in result.dropped],
    }
