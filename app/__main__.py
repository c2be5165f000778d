"""``python -m app`` / ``hanasu``: the desktop app, or a subcommand.

hanasu                      open the desktop app
hanasu run --input ...      headless: audio file in, speaker track out
hanasu bench ...            benchmarks (source checkout only: the bench/ package)
hanasu models list|download|verify
hanasu doctor               a report of this machine and install, to paste into an issue
hanasu personas list|import FILE|export ID FILE|validate FILE
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from app.logging_setup import configure_logging
from app.privacy import disable_telemetry, downloads_requested

log = logging.getLogger("app")


class UserError(Exception):
    """Raised for problems the user can fix; printed as one line, no traceback."""


def _user_errors() -> tuple[type[BaseException], ...]:
    from app.adapters.errors import EngineLoadError
    from app.adapters.file_audio import AudioFileError, OutputPathError
    from app.models.errors import ModelError

    return (UserError, EngineLoadError, AudioFileError, OutputPathError, ModelError)


BENCH_MISSING = (
    "hanasu bench needs the benchmark tools (the bench/ package) from a source checkout: "
    "clone the Hanasu repository, run 'bash tests/setup.sh' in it, "
    "then 'python -m app bench ...' from its root"
)
"""The one line ``hanasu bench`` prints (exit 2) where the ``bench`` package is absent."""


def bench_commands() -> ModuleType | None:
    """``bench.commands`` when the benchmark package is importable (a source checkout), else
    None. Looked up by name at call time: ``app`` never imports ``bench`` at module level, and
    the wheel and the bundle leave it out (tests/test_layers.py, tests/packaging)."""
    try:
        return importlib.import_module("bench.commands")
    except ModuleNotFoundError as exc:
        if exc.name in ("bench", "bench.commands"):
            return None
        raise


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The one argparse tree of every command. ``argv`` (the command line) lets ``bench``
    load only the options of the benchmark it names."""
    from app.cli import run

    parser = argparse.ArgumentParser(prog="hanasu", description="Talk to a local voice companion.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="load every engine, run one tiny turn, check audio devices",
    )
    parser.add_argument(
        "--fake-engines",
        action="store_true",
        dest="gui_fake_engines",
        help="(desktop app) use scripted engines instead of models",
    )
    sub = parser.add_subparsers(dest="command")
    run.add_arguments(sub.add_parser("run", help="listen to an audio file, write the reply audio"))
    bench_parser = sub.add_parser("bench", help="benchmarks (from a source checkout)")
    commands = bench_commands()
    if commands is None:
        bench_parser.add_argument("bench_args", nargs=argparse.REMAINDER)
    else:
        commands.register(bench_parser, list(argv[1:]) if argv[:1] == ["bench"] else [])
    sub.add_parser("models", help="list, download or verify models", add_help=False)
    sub.add_parser("personas", help="list, import, export or validate personas", add_help=False)
    sub.add_parser("doctor", help="report this machine and install (no network)", add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # First, before any library that could phone home is imported (app/privacy.py).
    disable_telemetry(allow_downloads=downloads_requested(argv))
    verbose = any(a in ("-v", "--verbose") for a in argv)
    argv = [a for a in argv if a not in ("-v", "--verbose")]
    configure_logging(verbose=verbose)
    # A crash inside a native library (llama.cpp, CTranslate2, onnxruntime, PortAudio) then
    # leaves every thread's Python stack on stderr instead of a bare "Segmentation fault".
    with contextlib.suppress(AttributeError, ValueError, OSError):  # stderr without a file
        faulthandler.enable()
    if argv and argv[0] == "personas":
        from app.cli.personas import main as personas_main

        return personas_main(argv[1:])
    if argv and argv[0] == "models":
        from app.models.cli import main as models_main

        return models_main(argv[1:])
    if argv and argv[0] == "doctor":
        from app.cli.doctor import main as doctor_main

        return doctor_main(argv[1:])
    if argv[:1] == ["bench"] and bench_commands() is None:
        print(f"hanasu: {BENCH_MISSING}", file=sys.stderr)
        return 2
    args = build_parser(argv).parse_args(argv)
    try:
        if args.command == "run":
            from app.cli import run

            return run.main(args)
        if args.command == "bench":
            commands = bench_commands()
            if commands is None:  # checked above; kept for a parser built by a caller
                print(f"hanasu: {BENCH_MISSING}", file=sys.stderr)
                return 2
            return int(commands.main(args))
        if args.self_test:
            from app.cli import selftest

            return selftest.main()
        from app.ui.display_check import missing_display

        if (problem := missing_display()) is not None:
            raise UserError(problem)
        from app.ui.main import run_app

        return _leave(run_app(fake_engines=args.gui_fake_engines))
    except _user_errors() as exc:
        print(f"hanasu: {exc}", file=sys.stderr)
        return 1
    except KeyError as exc:  # unknown persona id and the like
        print(f"hanasu: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _leave(code: int) -> NoReturn:
    """Leave the desktop app without the interpreter's teardown.

    By now the window's shutdown has stopped the pipeline and saved and closed the
    conversation store. What may still run is native code in daemon threads (a llama.cpp
    warm-up of a long history cannot be interrupted mid-batch); tearing the interpreter
    down under it crashed the process at exit (exit 139 in 3 of 8 quick launches under
    load, also before this change). Logs and standard streams are flushed first."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
