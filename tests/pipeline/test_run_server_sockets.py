"""With its language model on a server, the app only connects out, to that server: under
``strace -f`` a whole ``hanasu run --llm-url`` makes no ``listen``/``bind`` of its own
and no internet connection but the one to the server's address."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from tests.pipeline.conftest import silence, voiced
from tests.pipeline.test_run_cli import REPO
from tests.support.openai_server import StubRequest, StubServer, llama_chunks

_INET = re.compile(r"sin6?_addr=inet_(?:addr|pton)\((?:AF_INET6?, )?\"(?P<ip>[^\"]+)\"\)")
_PORT = re.compile(r"sin6?_port=htons\((?P<port>\d+)\)")


def answer(request: StubRequest) -> None:
    if request.body.get("stream"):
        llama_chunks(request, ["Hello", " there", "."])
    else:
        request.json(200, {"choices": [], "usage": {"prompt_tokens": 20}})


@pytest.mark.slow
def test_run_through_a_server_only_connects_out_to_it(tmp_path: Path) -> None:
    if shutil.which("strace") is None:
        pytest.fail("strace is not installed (apt-get install strace)")
    wav, trace = tmp_path / "q.wav", tmp_path / "trace.txt"
    soundfile.write(wav, np.concatenate([silence(0.5), voiced(1.0), silence(1.5)]), 16_000)
    env = {
        **os.environ,
        "HANASU_DATA_DIR": str(tmp_path / "data"),
        "HANASU_CONFIG_DIR": str(tmp_path / "config"),
    }
    with StubServer(answer) as stub:
        port = int(stub.url.split(":")[-1].split("/")[0])
        done = subprocess.run(
            [
                "strace", "-f", "-qq", "-e", "trace=socket,bind,listen,connect", "-o", str(trace),
                sys.executable, "-m", "app", "run", "--fake-engines", "--input", str(wav),
                "--output", str(tmp_path / "o.wav"), "--llm-url", stub.url, "--llm-model", "m",
            ],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        chats = len(stub.chat_bodies())
    assert done.returncode == 0, done.stderr
    assert chats >= 2  # the warm-up and the reply went to the server
    calls = trace.read_text().splitlines()
    assert not [c for c in calls if re.search(r"\b(listen|bind)\(", c)], "the app listened"
    inet = [c for c in calls if "connect(" in c and _INET.search(c)]
    assert inet, "no connection to the server was traced"
    for call in inet:
        ip, to = _INET.search(call), _PORT.search(call)
        assert ip is not None and to is not None
        assert (ip["ip"], int(to["port"])) == ("127.0.0.1", port), call
