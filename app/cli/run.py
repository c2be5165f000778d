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
``--output`` as in the app, everything is still written, and the exit status is 1. So is
a conversation that could not be saved (a full disk, a read-only or locked database):
one line says why and what to do, the outputs are written, and the exit status is 1, as
the run did not keep what the user said (``--no-history`` asks for nothing to be kept).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from app.adapters.file_audio import (
    OutputPathError,
    check_output_path,
    read_audio,
    write_audio,
)
from app.adapters.llama_llm import PromptTooLongError
from app.cli.file_session import RoomSimulation, RunResult, run_file, timeline_json
from app.cli.server_options import add_llm_server_arguments, api_key_from_env
from app.core.pipeline import (
    Engines,
    PipelineConfig,
    llm_language_notice,
)
from app.core.voice_gate import VoicePrint
from app.engines import (
    EngineChoice,
    build_echo_canceller,
    build_engines,
    build_turn_detector,
    warm_engines,
)
from app.personas import Persona, load_persona_library
from app.storage.database import open_database
from app.storage.keeper import Keeper
from app.storage.voice_prints import VoicePrintStore

if TYPE_CHECKING:
    from app.tools.confirmation import PendingCall
    from app.tools.mcp_hub import McpHub

log = logging.getLogger(__name__)

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input", type=Path, required=True, help="speech to listen to (any audio file)"
    )
    parser.add_argument("--output", type=Path, required=True, help="WAV of what the speaker plays")
    parser.add_argument("--timeline", type=Path, help="JSON with per-turn stage timestamps")
    add_engine_arguments(parser)
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


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """The persona and engine options ``load_persona_and_engines`` reads: one group, shared
    by ``run`` and the benchmarks that drive it."""
    group = parser.add_argument_group("persona and engines")
    group.add_argument("--persona", default=None, help="persona id (default: the first one)")
    group.add_argument("--fake-engines", action="store_true", help="scripted engines, no models")
    group.add_argument("--llm", type=Path, help="GGUF model file to use")
    group.add_argument("--asr", type=Path, help="faster-whisper model folder to use")
    group.add_argument("--tts", type=Path, help="TTS model file to use")
    group.add_argument(
        "--n-gpu-layers", type=int, default=None, help="LLM layers on the GPU (default: auto)"
    )
    add_llm_threads_argument(group)
    group.add_argument(
        "--llm-seed", type=int, default=None,
        help="the local model's sampling seed (default: a new one each run): two runs with "
             "the same seed give the same reply to the same words, for before/after benches")
    add_llm_server_arguments(group)


def add_llm_threads_argument(parser: argparse._ActionsContainer) -> None:
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
        llm_seed=getattr(args, "llm_seed", None),
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
    """Exit status: 0 done, 1 a one-line error (or a turn that could not be answered or
    saved: what was played is written first), 128 + signal number when interrupted."""
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
            mcp = tool_servers() if keeper is not None else None  # the tools need a keeper
            prints = _enrolled_voices(persona.name) if keeper is not None else []
            if stopper.signum is not None:  # a library swallowed the raise while loading
                raise _Interrupted(stopper.signum)
            stopper.streaming = True
            try:
                result = run_file(
                    engines, persona, audio, config, args.max_wait, echo, room, detector,
                    stopper.event, keeper, args.new_conversation, mcp, _say_question,
                    voice_prints=prints,
                )
            finally:
                if mcp is not None:
                    mcp.close()
                if keeper is not None:
                    keeper.close()  # the queued writes are done before it returns
            if keeper is not None and not keeper.db.kept_everything:  # said on stderr
                result.failures.append("the conversation was not saved")
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


def _say_question(pending: PendingCall) -> None:
    """A tool that changes something waits for a spoken yes: say so on stderr."""
    print(f"hanasu: {pending.call.name} waits for a yes or no before it runs",
          file=sys.stderr)


def _enrolled_voices(persona_name: str) -> list[VoicePrint]:
    """The voices enrolled in the app (Hanasu → Voices…): a run on the app's data folder
    hears them as the window does, and says so on stderr."""
    prints = VoicePrintStore().all()
    if prints:
        names = ", ".join(p.name for p in prints)
        print(f"hanasu: enrolled voices: {names}; other voices are answered only when they "
              f"say \"{persona_name}\"", file=sys.stderr)
    return prints


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


def tool_servers() -> McpHub | None:
    """The user's MCP servers from the settings (None when there are none), waited for
    while they start (bounded) so the first question can use them; a fault is a line on
    stderr."""
    from app.personas.text import plain_text
    from app.privacy import child_environment
    from app.storage.settings import load_settings
    from app.tools.mcp_hub import McpHub

    servers = load_settings().mcp_servers
    if not servers:
        return None
    hub = McpHub(servers, on_fault=lambda _server, message: print(
        f"hanasu: {plain_text(message)}", file=sys.stderr), env=child_environment())
    hub.wait_ready()
    return hub


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
