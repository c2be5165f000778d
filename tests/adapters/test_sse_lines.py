"""A server that streams one endless line: the reply stops with one line, memory bounded."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from app.adapters.openai_errors import LlmServerError
from app.adapters.openai_llm import OpenAILanguageModel
from app.adapters.sse import TooLong, capped_body, capped_lines
from app.core.ports import ChatMessage
from tests.support.openai_server import StubRequest, StubServer, llama_chunks

HI = [ChatMessage("system", "You are Hanasu."), ChatMessage("user", "Hi")]
ENDLESS_CAP = 64 * 1024 * 1024
"""The stub gives up after this much, so a reader without a cap still ends the test."""


def test_lines_are_split_across_chunks_and_line_ends() -> None:
    chunks = [b"data: {\"a\"", b": 1}\r\n\r", b"\ndata: [DONE]\n", b"tail"]
    assert list(capped_lines(chunks)) == ['data: {"a": 1}', "", "data: [DONE]", "tail"]


def test_a_line_at_the_limit_passes_and_one_byte_more_stops_before_reading_on() -> None:
    assert list(capped_lines([b"x" * 10, b"\n"], limit=10)) == ["x" * 10]
    read: list[int] = []

    def endless() -> Iterator[bytes]:
        while True:
            read.append(1)
            yield b"y" * 4

    with pytest.raises(TooLong):
        list(capped_lines(endless(), limit=10))
    assert len(read) == 3
    with pytest.raises(TooLong):
        capped_body([b"z" * 6, b"z" * 6], limit=10)


def test_an_endless_stream_line_fails_the_turn_in_one_line_and_the_next_turn_works() -> None:
    sent: list[int] = []

    def handle(request: StubRequest) -> None:
        if request.number > 1:
            llama_chunks(request, ["Fine", " again"])
            return
        request.start_stream()
        request.event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        block = b"x" * 65536
        frame = f"{len(block):x}\r\n".encode() + block + b"\r\n"
        request.handler.wfile.write(b'7\r\ndata: "\r\n')
        total = 0
        while total < ENDLESS_CAP and not stub.release.is_set():
            request.handler.wfile.write(frame)
            total += len(block)
            sent.append(total)
        request.end_stream()

    with StubServer(handle) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        with pytest.raises(LlmServerError, match="stream line of more than 1024 KiB") as err:
            list(llm.stream(HI, lambda: False))
        assert "\n" not in str(err.value)
        assert "".join(llm.stream(HI, lambda: False)) == "Fine again"
    assert sent and sent[-1] < 24 * 1024 * 1024  # the client stopped reading near 1 MiB


def _endless_body(request: StubRequest, status: int, stop: Callable[[], bool],
                  sent: list[int]) -> None:
    """Answer ``status`` with a chunked body that never ends (until ``stop``)."""
    h = request.handler
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    block = b"x" * 65536
    frame = f"{len(block):x}\r\n".encode() + block + b"\r\n"
    total = 0
    try:
        while total < ENDLESS_CAP and not stop():
            h.wfile.write(frame)
            total += len(block)
            sent.append(total)
        request.end_stream()
    except OSError:  # the client hung up: what it should do
        pass


@pytest.mark.parametrize("where", ["model list", "error body"])
def test_an_endless_model_list_or_error_body_is_one_line_and_memory_bounded(
        where: str) -> None:
    """The model list (asked first when no model is configured, and by Test connection)
    and an error's body are capped like the stream."""
    sent: list[int] = []

    def handle(request: StubRequest) -> None:
        if where == "model list" and request.path.endswith("/models"):
            _endless_body(request, 200, stub.release.is_set, sent)
        elif where == "error body" and request.path.endswith("/chat/completions"):
            _endless_body(request, 500, stub.release.is_set, sent)
        else:
            request.json(200, {"data": [{"id": "m"}]})

    with StubServer(handle) as stub:
        llm = OpenAILanguageModel(stub.url, None if where == "model list" else "m")
        with pytest.raises(LlmServerError, match="KiB") as err:
            list(llm.stream(HI, lambda: False))
        assert "\n" not in str(err.value)
    assert sent and sent[-1] < 40 * 1024 * 1024  # the client stopped reading near the cap
