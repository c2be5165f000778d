"""`hanasu run --llm-url` against a server that fails mid-conversation (HTTP 500, a body
that is not an SSE stream, a stream cut off mid-reply): one line on stderr, no traceback,
the persona's spoken apology in the output, everything written, exit status 1.

The fake recognizer and voice keep it fast; the language model is a stub server on
127.0.0.1 (``tests.support.openai_server.StubServer``) that warms up fine and then fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.core.apology import APOLOGIES
from tests.pipeline.conftest import silence, voiced
from tests.pipeline.test_run_cli import REPO
from tests.support.openai_server import StubRequest, StubServer, llama_chunks


def _server_error(request: StubRequest) -> None:
    request.json(500, {"error": {"message": "CUDA error: out of memory"}})


def _garbage(request: StubRequest) -> None:
    request.start_stream()
    request.event("{this is not json")
    request.end_stream()


def _cut_off(request: StubRequest) -> None:
    llama_chunks(request, ["The", " sea", " is", " wide.", " Whales", " sing"], cut_after=5)


def _run(tmp_path: Path, reply: Callable[[StubRequest], None]) -> subprocess.CompletedProcess[str]:
    def answer(request: StubRequest) -> None:
        if request.body.get("stream"):
            reply(request)
        else:  # the warm-up works: the server fails while answering
            request.json(200, {"choices": [], "usage": {"prompt_tokens": 20}})

    wav = tmp_path / "q.wav"
    soundfile.write(wav, np.concatenate([silence(0.5), voiced(1.0), silence(1.5)]), 16_000)
    env = {
        **os.environ,
        "HANASU_DATA_DIR": str(tmp_path / "data"),
        "HANASU_CONFIG_DIR": str(tmp_path / "config"),
    }
    with StubServer(answer) as stub:
        return subprocess.run(
            [
                sys.executable, "-m", "app", "run", "--fake-engines", "--input", str(wav),
                "--output", str(tmp_path / "o.wav"), "--timeline", str(tmp_path / "t.json"),
                "--llm-url", stub.url, "--llm-model", "m", "--max-wait", "10",
            ],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "said", "heard"),
    [
        (_server_error, "server error (HTTP 500: CUDA error: out of memory)", ""),
        (_garbage, "sent a stream chunk that is not JSON", ""),
        (_cut_off, "the connection was cut", "The sea is wide. "),
    ],
    ids=["http-500", "garbage", "cut-off"],
)
def test_a_failing_server_is_one_line_an_apology_and_exit_1(
    tmp_path: Path, reply: Callable[[StubRequest], None], said: str, heard: str
) -> None:
    done = _run(tmp_path, reply)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("hanasu: the reply failed") and said in lines[0], lines[0]
    assert "127.0.0.1" in lines[0]  # names the server
    track, rate = soundfile.read(str(tmp_path / "o.wav"), dtype="float32")
    loud = np.flatnonzero(np.abs(track) > 0.01) / rate
    assert loud.size and loud[0] > 1.5  # the apology, said after the question ended
    [turn] = json.loads((tmp_path / "t.json").read_text())["turns"]  # still written
    assert turn["heard_text"] == heard + APOLOGIES["en"]  # what was said, then sorry


def test_a_servers_error_text_reaches_the_terminal_without_escapes(tmp_path: Path) -> None:
    def hostile(request: StubRequest) -> None:
        request.json(500, {"error": {"message": "\x1b]0;owned\x07\x1b[2Jgone \u202eevil"}})

    done = _run(tmp_path, hostile)
    assert done.returncode == 1, done.stderr
    [line] = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert "server error (HTTP 500: " in line and "gone evil" in line, line
    for control in ("\x1b", "\x07", "\u202e"):
        assert control not in done.stderr
