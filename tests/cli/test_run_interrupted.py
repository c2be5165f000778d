"""A signal while `hanasu run` loads its models: one line, exit 128 + signal, nothing written.

The handler raises to abandon the load; where that raise lands decides what escapes. Raised
while a C extension initialises (`import ctranslate2` in CI), Python turns it into
"ImportError: initialization failed" caused by the interruption, which once escaped as a
traceback with exit 1."""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from app.cli import run


def _args(tmp_path: Path) -> argparse.Namespace:
    question = tmp_path / "q.wav"
    sf.write(question, np.zeros(16_000, dtype=np.float32), 16_000)
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    return parser.parse_args(
        ["--input", str(question), "--output", str(tmp_path / "o.wav"), "--fake-engines"]
    )


def _signal_inside_extension_init(args: argparse.Namespace) -> object:
    """What CPython does when a signal handler raises during an extension's init."""
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        signal.sigtimedwait([], 0)  # let the handler run here, not later
    except BaseException as exc:  # the interruption, wrapped as CPython does
        raise ImportError("initialization failed") from exc
    raise AssertionError("the handler did not run")


def _signal_swallowed_by_a_library(args: argparse.Namespace) -> object:
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        signal.sigtimedwait([], 0)
    except BaseException:  # a library that catches everything
        pass
    return SimpleNamespace(), SimpleNamespace(notices=())


@pytest.mark.parametrize(
    "load", [_signal_inside_extension_init, _signal_swallowed_by_a_library],
    ids=["wrapped-in-import-error", "swallowed"],
)
def test_signal_while_loading_is_one_line_and_exit_143(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    load: object,
) -> None:
    args = _args(tmp_path)
    monkeypatch.setattr(run, "load_persona_and_engines", load)
    monkeypatch.setattr(run, "open_keeper", lambda: None)
    monkeypatch.setattr(run, "run_file", _never_streams)
    assert run.main(args) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert "interrupted (SIGTERM) before the input was played; nothing written" in err
    assert not (tmp_path / "o.wav").exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is put back


def test_an_error_without_a_signal_still_escapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(args: argparse.Namespace) -> object:
        raise ImportError("a real broken install")

    monkeypatch.setattr(run, "load_persona_and_engines", broken)
    with pytest.raises(ImportError, match="a real broken install"):
        run.main(_args(tmp_path))


def _never_streams(*args: object) -> object:
    raise AssertionError("the run streamed after a signal while loading")
