"""``hanasu run``: listen to a WAV as if it were the microphone, write what the app says.

The output is the speaker track on the input's own timeline, so the reply's position in
it is the real voice-to-voice latency.

The output and timeline paths are checked before anything loads, so a bad path costs no
run. Ctrl-C (SIGINT) or SIGTERM stops cleanly: the input stops, the pipeline stops, what
was played so far is written to ``--output`` (and ``--timeline``), one line says so, and
the exit status is 128 + the signal number (130 for Ctrl-C, 143 for SIGTERM), as a shell
reports a process killed by that signal. A second signal is not waited for: it ends the
process at once.

A turn the language model could not answer (its server answered 500 or garbage, or cut
the stream off) is one line on stderr, no traceback; the persona's spoken apology is in
``--output`` as in the app, everything is still written, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import numpy as np

from app.adapters.file_audio import (
    EchoRoom,
    FileMicrophone,
    FileSpeaker,
    OutputPathError,
    check_output_path,
    read_audio,
    write_audio,
)
from app.adapters.llama_llm import PromptTooLongError
from app.cli.server_options import add_llm_server_arguments, api_key_from_env
from app.core.events import FloatAudio, PipelineEvent, StageFailed
from app.core.metrics import TurnTimeline
from app.core.pipeline import (
    Engines,
    MonotonicClock,
    PipelineConfig,
    VoicePipeline,
    llm_language_notice,
)
from app.core.ports import EchoCanceller, TurnDetector
from app.core.telemetry import EngineNotice, ReplyFailed
from app.engines import (
    EngineChoice,
    build_echo_canceller,
    build_engines,
    build_turn_detector,
    warm_engines,
)
from app.personas import Persona, load_persona_library
from app.personas.switch import persona_switch
from app.storage.database import open_database
from app.storage.keeper import Keeper, attach

log = logging.getLogger(__name__)

IDLE_CONFIRMATIONS = 5
"""Consecutive idle polls (50 ms apart) before a run is considered finished."""


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
    resumed_after_pause: int = 0
    not_the_user: int = 0
    interrupted: bool = False
    """Stopped early by a signal: ``output`` holds what was played until then."""
    failures: list[str] = field(default_factory=list)
    """What failed while running (a reply the model could not give, a stage that broke),
    one line each, as said on stderr; any makes the run's exit status 1."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input", type=Path, required=True, help="speech to listen to (any audio file)"
    )
    parser.add_argument("--output", type=Path, required=True, help="WAV of what the speaker plays")
    parser.add_argument("--timeline", type=Path, help="JSON with per-turn stage timestamps")
    parser.add_argument("--persona", default=None, help="persona id (default: the first one)")
    parser.add_argument("--fake-engines", action="store_true", help="scripted engines, no models")
    parser.add_argument("--llm", type=Path, help="GGUF model file to use")
    parser.add_argument("--asr", type=Path, help="faster-whisper model folder to use")
    parser.add_argument("--tts", type=Path, help="TTS model file to use")
    parser.add_argument(
        "--n-gpu-layers", type=int, default=None, help="LLM layers on the GPU (default: auto)"
    )
    add_llm_threads_argument(parser)
    add_llm_server_arguments(parser)
    parser.add_argument(
        "--no-speculative",
        action="store_true",
        help="wait for the end of turn before starting ASR (baseline)",
    )
    parser.add_argument(
        "--echo-room",
        type=float,
        metavar="MS",
        help="simulate loudspeakers: the microphone also hears the reply, MS later",
    )
    parser.add_argument(
        "--echo-gain", type=float, default=0.5, help="loudness of the simulated echo"
    )
    parser.add_argument(
        "--aec",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="cancel the speaker's echo (default: on with --echo-room)",
    )
    parser.add_argument(
        "--smart-turn",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="end the turn early when the user sounds finished (Smart Turn model)",
    )
    parser.add_argument(
        "--new-conversation",
        action="store_true",
        help="start a fresh conversation with the persona (the last one is kept in history)",
    )
    parser.add_argument(
        "--no-history",
        action="store_true",
        help="keep nothing: no saved conversation is resumed and nothing is written",
    )
    parser.add_argument(
        "--max-wait",
        type=float,
        default=90.0,
        help="seconds to wait for replies after the input ends",
    )


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
) -> RunResult:
    """Stream ``audio`` through a fresh pipeline in real time; return the speaker track.

    Setting ``stop`` ends the run early (Ctrl-C): the result then holds what was played
    so far and has ``interrupted`` set. With a ``keeper`` the persona's saved
    conversation is resumed (or a new one started) and every exchange is saved to it.
    """
    stop = stop if stop is not None else threading.Event()
    clock = MonotonicClock()
    pipeline = VoicePipeline(
        engines, persona.full_system_prompt(), config, clock, echo, turn_detector
    )
    # its languages, voice and "Hmm," phrases, made ready before the clock starts
    pipeline.use_persona(persona_switch(persona, fresh_conversation=False))
    problems = _Problems()
    pipeline.add_observer(problems)
    speaker = FileSpeaker(engines.tts.sample_rate, clock)
    echo_room = EchoRoom(speaker, room.delay_s, room.gain) if room else None
    mic = FileMicrophone(audio, clock, room=echo_room)
    if keeper is not None:
        attach(keeper, pipeline, persona.id, persona.full_system_prompt(), new_conversation)
    pipeline.start()
    _wait_until_warm(pipeline, stop)
    log.info("streaming %.1f s of input as the microphone", mic.duration)
    clock.start()
    speaker.start(pipeline.pull_audio)
    mic.start(pipeline.push_audio)
    try:
        _wait_for_replies(pipeline, clock, mic.duration, max_wait_s, stop)
    finally:
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
        resumed_after_pause=pipeline.recorder.resumed_after_pause,
        not_the_user=pipeline.recorder.not_the_user,
        interrupted=interrupted,
        failures=problems.failures(),
    )


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
    while clock.now() < input_s:
        if stop.wait(0.05):
            return
    idle_polls = 0
    deadline = input_s + max_wait_s
    while clock.now() < deadline and idle_polls < IDLE_CONFIRMATIONS:
        if stop.wait(0.05):
            return
        idle_polls = idle_polls + 1 if pipeline.is_idle() else 0
    if idle_polls < IDLE_CONFIRMATIONS:
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
        "turns": [turn.as_dict() for turn in result.turns],
    }


def add_llm_threads_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--llm-threads", type=int, default=None,
        help="LLM decode threads (default: 1 on a 2-core machine, else llama.cpp's choice)")


def load_persona_and_engines(args: argparse.Namespace) -> tuple[Persona, Engines]:
    """The persona and warmed engines the command-line options ask for (run and bench)."""
    personas = load_persona_library()  # bundled + the user folder, as in the app
    for message in personas.messages:
        log.warning("%s", message)
    persona = personas.get(args.persona) if args.persona else personas.default
    choice = EngineChoice(
        fake=args.fake_engines,
        llm=args.llm,
        asr=args.asr,
        tts=args.tts,
        n_gpu_layers=args.n_gpu_layers,
        llm_threads=getattr(args, "llm_threads", None),
        llm_url=args.llm_url,
        llm_model=args.llm_model,
        llm_api_key=api_key_from_env(args),
    )
    engines = build_engines(choice)
    language_notice = llm_language_notice(engines, persona.name, persona.spoken_languages())
    for notice in [*engines.notices, *filter(None, [language_notice])]:  # said, not only logged
        print(f"hanasu: {notice}", file=sys.stderr)
    try:
        warm_engines(engines, persona.full_system_prompt())
    except PromptTooLongError as exc:
        raise PromptTooLongError(exc.tokens, exc.limit, f"persona {persona.id!r}") from exc
    return persona, engines


class _Interrupted(BaseException):
    """A signal arrived before the run started streaming: there is nothing to write.

    A BaseException, like KeyboardInterrupt, so the adapters' ``except Exception`` around
    a model load does not turn it into a load error."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _SignalStop:
    """SIGINT/SIGTERM: while loading, abandon the run; while streaming, set ``event`` so
    the run winds down and writes what it has. A second signal is not waited for."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signum: int | None = None
        self.streaming = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            print(f"hanasu: {_signal_name(signum)} again; stopped at once", file=sys.stderr)
            os._exit(128 + signum)
        self.signum = signum
        self.event.set()
        if not self.streaming:
            raise _Interrupted(signum)


@contextmanager
def _signals_stop(handler: _SignalStop) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signal.signal only works on the main thread (run_file used from a test)
        return
    wanted = (signal.SIGINT, signal.SIGTERM)
    previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {
        sig: signal.signal(sig, handler) for sig in wanted
    }
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _interrupted_while_loading(exc: BaseException, stopper: _SignalStop) -> int | None:
    """The signal number when ``exc`` is the loading being abandoned, else None.

    The handler's raise can surface as another error: raised while a C extension
    initialises (``import ctranslate2``), it becomes "ImportError: initialization failed"
    with the interruption as its cause. Any error after a signal, before streaming, is
    the interruption."""
    if isinstance(exc, _Interrupted):
        return exc.signum
    if stopper.signum is not None and not stopper.streaming:
        return stopper.signum
    return None


def _signal_name(signum: int) -> str:
    return signal.Signals(signum).name


def main(args: argparse.Namespace) -> int:
    """Exit status: 0 done, 1 a one-line error (or a turn that could not be answered:
    what was played is written first), 128 + signal number when interrupted."""
    for path, option in ((args.output, "--output"), (args.timeline, "--timeline")):
        if path is not None:
            check_output_path(path, option)
    audio = read_audio(args.input)
    stopper = _SignalStop()
    try:
        with _signals_stop(stopper):
            persona, engines = load_persona_and_engines(args)
            config = PipelineConfig(speculative=not args.no_speculative)
            room = (
                RoomSimulation(args.echo_room / 1000, args.echo_gain) if args.echo_room else None
            )
            use_aec = args.aec if args.aec is not None else room is not None
            echo = build_echo_canceller() if use_aec else None
            detector = (
                build_turn_detector() if args.smart_turn and not args.fake_engines else None
            )
            keeper = None if args.no_history or _shares_the_apps_history() else open_keeper()
            if stopper.signum is not None:  # a library swallowed the raise while loading
                raise _Interrupted(stopper.signum)
            stopper.streaming = True
            try:
                result = run_file(
                    engines, persona, audio, config, args.max_wait, echo, room, detector,
                    stopper.event, keeper, args.new_conversation,
                )
            finally:
                if keeper is not None:
                    keeper.close()  # the queued writes are done before it returns
            stopper.streaming = False
    except BaseException as exc:
        signum = _interrupted_while_loading(exc, stopper)
        if signum is None:
            raise
        print(
            f"hanasu: interrupted ({_signal_name(signum)}) before the input was played;"
            " nothing written",
            file=sys.stderr,
        )
        return 128 + signum
    _write_outputs(args, result)
    if result.interrupted and stopper.signum is not None:
        written = f"{result.output.size / result.sample_rate:.1f} s to {args.output}"
        if args.timeline:
            written += f" and {len(result.turns)} turn(s) to {args.timeline}"
        print(
            f"hanasu: interrupted ({_signal_name(stopper.signum)}); wrote {written}",
            file=sys.stderr,
        )
        return 128 + stopper.signum
    _log_turns(result)
    return 1 if result.failures else 0


def _shares_the_apps_history() -> bool:
    """True (and one line on stderr) when the desktop app runs on this data folder: the
    run then keeps its own conversation, in memory only, instead of resuming and writing
    the one the app has open (two writers would interleave one conversation)."""
    from app.ui.single_instance import app_running  # QtCore only: no display needed

    if not app_running():
        return False
    print("hanasu: the desktop app is running with this data folder; this run keeps its own "
          "conversation and saves nothing (quit the app to continue the saved one)",
          file=sys.stderr)
    return True


def open_keeper() -> Keeper:
    """The app's conversation store; what went wrong opening it is one line on stderr."""
    opened = open_database()
    if opened.notice:
        print(f"hanasu: {opened.notice}", file=sys.stderr)
    return Keeper(opened, notify=lambda message: print(f"hanasu: {message}", file=sys.stderr))


def _write_outputs(args: argparse.Namespace, result: RunResult) -> None:
    """Write the speaker track and the timeline; a failure is one line (OutputPathError)."""
    try:
        write_audio(args.output, result.output, result.sample_rate)
        if args.timeline:
            args.timeline.write_text(json.dumps(timeline_json(result, args.input), indent=2))
    except OSError as exc:
        raise OutputPathError(f"could not write the output: {exc}") from exc


def _log_turns(result: RunResult) -> None:
    """One line per turn; the user's and the reply's words only at DEBUG (they are private)."""
    for turn in result.turns:
        v2v = turn.voice_to_voice
        log.info("turn %d: voice-to-voice %s", turn.turn_id,
                 f"{v2v:.2f} s" if v2v is not None else "n/a")
        log.debug("turn %d: %r -> %r", turn.turn_id, turn.transcript, turn.heard_text)
