"""OpenAI-compatible servers on 127.0.0.1 for the server-LLM tests.

``llama_cpp_server`` runs the real ``python -m llama_cpp.server`` (llama-cpp-python's
server extra) on the embedded SmolLM2 on a free port, always stops it (its whole process
group), and fails the test in one line if it cannot start. Its verbose log is the
server's own account of prompt caching ("N prefix-match hit, remaining M prompt tokens")
and of aborted requests ("disconnected"), which the tests read.

``StubServer`` is a tiny ``http.server`` that answers the way llama-server does (SSE
chunks with ``timings``), or fails the way real servers fail: killed mid-stream, slow to
the first byte, refusing the key.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.ports import PromptStats

SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
MODEL_ALIAS = "smollm2"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def embedded_gguf() -> Path:
    from app.adapters.llama_load import embedded_model_path

    return embedded_model_path()


_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
_EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")


class LlamaCppServer:
    """One ``llama_cpp.server`` process and its log."""

    def __init__(self, log_path: Path, port: int | None = None, api_key: str | None = None):
        self.log_path = log_path
        self.port = port or free_port()
        self.api_key = api_key
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 90.0) -> None:
        missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            pytest.fail(
                f"llama_cpp.server cannot start: {', '.join(missing)} missing "
                "(pip install 'llama-cpp-python[server]')",
                pytrace=False,
            )
        command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(embedded_gguf()),
            "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", "4096",
            "--n_threads", str(max((os.cpu_count() or 2) // 2, 1)),  # llama-cpp's defaults,
            "--n_threads_batch", str(os.cpu_count() or 1),  # as for the in-process model
            "--verbose", "true",
        ]  # fmt: skip
        if self.api_key:
            command += ["--api_key", self.api_key]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: stop() ends all of it
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.stop()
                pytest.fail(
                    f"llama_cpp.server exited ({code}) before serving: {self._last_line()}",
                    pytrace=False,
                )
            try:
                if httpx.get(f"{self.url}/models", timeout=1.0, headers=self._auth()).is_success:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        pytest.fail(
            f"llama_cpp.server did not serve within {timeout_s:.0f} s: {self._last_line()}",
            pytrace=False,
        )

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def stop(self) -> None:
        """End the server's process group (SIGTERM, then SIGKILL): nothing is left over."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                return
            try:
                process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def kill(self) -> None:
        """SIGKILL now, as when the server machine dies or the process is killed."""
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
            self.process = None

    def _last_line(self) -> str:
        lines = [ln for ln in self.log().splitlines() if ln.strip()]
        return lines[-1][:200] if lines else "(no output)"

    # ---- the server's own counts ---------------------------------------------------------

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def mark(self) -> int:
        """A position in the log; ``*_since(mark)`` look at what came after it."""
        return len(self.log())

    def wait_for(self, text: str, mark: int, timeout_s: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if text in self.log()[mark:]:
                return True
            time.sleep(0.05)
        return False

    def prompt_since(self, mark: int) -> PromptStats:
        """Prompt tokens and cache hits of the last request after ``mark``, as the server
        logged them (waits for the end-of-request perf line)."""
        self.wait_for("prompt eval time", mark)
        tail = self.log()[mark:]
        hits = _HIT.findall(tail)
        if hits:
            hit, rest = (int(n) for n in hits[-1])
            return PromptStats(prompt_tokens=hit + rest, reused_tokens=hit)
        evaluated = _EVAL.findall(tail)
        assert evaluated, f"the server logged no prompt evaluation: {tail[-500:]!r}"
        return PromptStats(prompt_tokens=int(evaluated[-1]), reused_tokens=0)

    def fully_cached_since(self, mark: int) -> bool:
        self.wait_for("prompt eval time", mark)
        return "full prompt already cached" in self.log()[mark:]


@contextmanager
def llama_cpp_server(folder: Path, **kwargs: Any) -> Iterator[LlamaCppServer]:
    server = LlamaCppServer(folder / "llama_cpp_server.log", **kwargs)
    try:
        server.start()
        yield server
    finally:
        server.stop()


# ---- stub servers ----------------------------------------------------------------------

Handler = Callable[["StubRequest"], None]


@dataclass
class StubRequest:
    """One request the stub received, and the means to answer it."""

    handler: BaseHTTPRequestHandler
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    number: int

    def json(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        h = self.handler
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def start_stream(self) -> None:
        h = self.handler
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

    def event(self, payload: object | str) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        data = f"data: {text}\n\n".encode()
        self.handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.handler.wfile.flush()

    def end_stream(self) -> None:
        self.handler.wfile.write(b"0\r\n\r\n")
        self.handler.wfile.flush()

    def cut(self) -> None:
        """Drop the connection mid-body, as a killed server's kernel does."""
        self.handler.wfile.flush()
        self.handler.connection.shutdown(socket.SHUT_RDWR)
        self.handler.close_connection = True


def llama_chunks(
    request: StubRequest,
    pieces: list[str],
    prompt_n: int = 7,
    cache_n: int = 20,
    cut_after: int | None = None,
    delay_s: float = 0.0,
) -> None:
    """Stream ``pieces`` one per chunk, each with llama-server's ``timings``."""
    request.start_stream()
    request.event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
    for n, piece in enumerate(pieces, start=1):
        if cut_after is not None and n > cut_after:
            request.cut()
            return
        if delay_s:
            time.sleep(delay_s)
        timings = {"cache_n": cache_n, "prompt_n": prompt_n, "predicted_n": n}
        request.event(
            {
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                "timings": timings,
            }
        )
    request.event(
        {
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_n + cache_n,
                "completion_tokens": len(pieces),
                "prompt_tokens_details": {"cached_tokens": cache_n},
            },
        }
    )
    request.event("[DONE]")
    request.end_stream()


@dataclass
class StubServer:
    """An http.server on 127.0.0.1 whose every POST/GET is answered by ``handle``."""

    handle: Handler
    requests: list[StubRequest] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    """Set at teardown, so a handler that stalls on purpose lets go."""

    def __post_init__(self) -> None:
        stub = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else {}
                request = StubRequest(
                    self, self.path, dict(self.headers.items()), body, len(stub.requests) + 1
                )
                stub.requests.append(request)
                # the client may go away mid-answer: that is what a cancelled stream does
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    stub.handle(request)

            do_POST = _serve
            do_GET = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
