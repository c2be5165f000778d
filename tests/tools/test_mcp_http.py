"""A server at a local address (streamable HTTP on 127.0.0.1), started by the test: its
tools are listed and answer exactly as over stdio."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.tools.mcp_config import McpServer, McpToolChoice
from app.tools.spec import ToolCall, ToolRegistry
from tests.tools.mcp_support import SERVER_SCRIPT, running_hub


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(SERVER_SCRIPT), "--http", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:  # the port opens once uvicorn listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def test_a_local_http_server_lists_and_answers(http_server: str) -> None:
    server = McpServer(name="Atlas Web", url=http_server,
                       tools={"capital_of": McpToolChoice(enabled=True)})
    with running_hub(server) as hub:
        [status] = hub.status()
        assert status.state == "connected", status.message
        assert [t.spec.name for t in hub.tools()] == ["atlas_web__capital_of"]
        got = ToolRegistry(hub.tools()).run(
            ToolCall("atlas_web__capital_of", {"country": "France"}))
        assert got.ok and got.text == "Paris"
