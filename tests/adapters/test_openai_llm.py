"""The server language model against tiny stub servers on 127.0.0.1: what it sends, how it
reads llama-server's stream, and every way a server fails (killed mid-stream, slow to the
first byte, wrong key, nothing listening, busy, broken), each one line, none fatal."""

from __future__ import annotations

import logging
import time

import pytest

from app.adapters.openai_errors import LlmServerError, api_base
from app.adapters.openai_llm import OpenAILanguageModel
from app.adapters.sampling import SamplingConfig
from app.core.ports import ChatMessage, PromptStats
from tests.support.openai_server import StubRequest, StubServer, free_port, llama_chunks

SYSTEM = ChatMessage("system", "You are Hanasu.")
HI = [SYSTEM, ChatMessage("user", "Hi")]
KEY = "sk-test-secret-4242"


def collect(llm: OpenAILanguageModel, messages: list[ChatMessage]) -> tuple[list[str], list[str]]:
    """Pieces and, in order, "prompt" where on_prompt came among them."""
    order: list[str] = []
    pieces: list[str] = []

    def on_prompt(stats: PromptStats) -> None:
        order.append(f"prompt {stats.prompt_tokens}/{stats.reused_tokens}")

    for piece in llm.stream(messages, lambda: False, on_prompt):
        pieces.append(piece)
        order.append(piece)
    return pieces, order


def test_streams_one_piece_per_chunk_with_the_cache_count_before_the_first() -> None:
    with StubServer(lambda r: llama_chunks(r, [" Hello", " there", "!"])) as stub:
        llm = OpenAILanguageModel(stub.url, "gemma")
        pieces, order = collect(llm, HI)
    assert pieces == ["Hello", " there", "!"]  # leading space stripped, as in-process
    assert order[0] == "prompt 27/20"  # llama-server timings: cache_n 20 + prompt_n 7
    assert llm.last_stream is not None
    assert llm.last_stream.tokens_per_chunk == 1.0
    assert llm.last_stream.cached_tokens == 20


def test_request_keeps_the_prompt_cache_and_thinking_off() -> None:
    with StubServer(lambda r: llama_chunks(r, ["Hi"])) as stub:
        llm = OpenAILanguageModel(
            stub.url, "gemma-4-26b-a4b", api_key=KEY, sampling=SamplingConfig(max_tokens=50)
        )
        list(llm.stream(HI, lambda: False))
        [body] = stub.chat_bodies()
        headers = stub.requests[0].headers
    assert body["stream"] is True and body["model"] == "gemma-4-26b-a4b"
    assert body["cache_prompt"] is True
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["max_tokens"] == 50
    assert body["messages"] == [
        {"role": "system", "content": "You are Hanasu."},
        {"role": "user", "content": "Hi"},
    ]
    assert headers["Authorization"] == f"Bearer {KEY}"


def test_prompt_is_append_only_across_turns() -> None:
    with StubServer(lambda r: llama_chunks(r, ["Fine", "."])) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        first = HI
        reply = "".join(llm.stream(first, lambda: False))
        second = [*first, ChatMessage("assistant", reply), ChatMessage("user", "And you?")]
        list(llm.stream(second, lambda: False))
        one, two = (b["messages"] for b in stub.chat_bodies())
    assert two[: len(one)] == one


def test_cancel_closes_the_stream_within_one_chunk() -> None:
    pieces = [f" w{i}" for i in range(50)]
    with StubServer(lambda r: llama_chunks(r, pieces, delay_s=0.02)) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        got: list[str] = []
        for piece in llm.stream(HI, lambda: len(got) >= 3):
            got.append(piece)
        assert len(got) == 3
        # the stub saw the client go away: its next write failed and it stopped
        time.sleep(0.3)
    assert llm.last_stream is not None and llm.last_stream.chunks <= 4


def test_thought_block_and_leaked_end_marker_are_never_spoken() -> None:
    chunks = ["<|channel>", "thought: be nice", "<channel|>", "Hello", " friend", "<end_of_turn>"]
    with StubServer(lambda r: llama_chunks(r, chunks)) as stub:
        pieces, _ = collect(OpenAILanguageModel(stub.url, "gemma"), HI)
    assert "".join(pieces) == "Hello friend"


def test_server_killed_mid_stream_is_one_line_and_the_next_turn_works() -> None:
    def handle(request: StubRequest) -> None:
        cut = 2 if request.number == 1 else None
        llama_chunks(request, ["One", " two", " three", " four"], cut_after=cut)

    with StubServer(handle) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        heard: list[str] = []
        with pytest.raises(LlmServerError) as failure:
            for piece in llm.stream(HI, lambda: False):
                heard.append(piece)
        assert heard == ["One", " two"]  # what was streamed before the cut was delivered
        assert "\n" not in str(failure.value)
        assert "cut" in str(failure.value)
        assert stub.url.removesuffix("/v1") in str(failure.value)
        # no broken state: the next turn simply asks again
        assert "".join(llm.stream(HI, lambda: False)) == "One two three four"


def test_slow_first_byte_times_out_in_one_line() -> None:
    def stall(request: StubRequest) -> None:
        stub.release.wait(10)

    with StubServer(stall) as stub:
        llm = OpenAILanguageModel(stub.url, "m", read_timeout_s=0.5)
        started = time.monotonic()
        with pytest.raises(LlmServerError, match=r"sent nothing for 0 s|timed out"):
            list(llm.stream(HI, lambda: False))
        assert time.monotonic() - started < 5


def test_wrong_key_is_one_line_without_the_key(caplog: pytest.LogCaptureFixture) -> None:
    def refuse(request: StubRequest) -> None:
        request.json(401, {"error": {"message": "Invalid API Key", "type": "auth_error"}})

    caplog.set_level(logging.DEBUG)
    with StubServer(refuse) as stub:
        llm = OpenAILanguageModel(stub.url, "m", api_key=KEY)
        with pytest.raises(LlmServerError) as failure:
            list(llm.stream(HI, lambda: False))
        with pytest.raises(LlmServerError):
            llm.warm([SYSTEM])
    message = str(failure.value)
    assert "API key was refused" in message and "401" in message and "Invalid API Key" in message
    assert KEY not in message and KEY not in caplog.text and KEY not in repr(llm.__dict__)


def test_nothing_listening_is_one_line() -> None:
    llm = OpenAILanguageModel(f"http://127.0.0.1:{free_port()}", "m")
    with pytest.raises(LlmServerError, match=r"cannot connect .*is the server running\?") as e:
        list(llm.stream(HI, lambda: False))
    assert "\n" not in str(e.value)
    with pytest.raises(LlmServerError, match="cannot connect"):
        llm.warm([SYSTEM])


@pytest.mark.parametrize(
    ("status", "said", "expected"),
    [
        (404, {"error": {"message": "The model `x` does not exist."}}, r"no model 'm'.*404"),
        (429, {"error": {"message": "Rate limit reached"}}, r"too many requests.*429"),
        (500, {"detail": "CUDA out of memory"}, r"server error \(HTTP 500: CUDA out of memory"),
        (503, "Service Unavailable", r"HTTP 503"),
    ],
)
def test_http_errors_are_one_line(status: int, said: object, expected: str) -> None:
    with StubServer(lambda r: r.json(status, said)) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        with pytest.raises(LlmServerError, match=expected) as failure:
            list(llm.stream(HI, lambda: False))
    assert "\n" not in str(failure.value)


def test_error_streamed_mid_reply_is_one_line() -> None:
    def handle(request: StubRequest) -> None:
        request.start_stream()
        request.event({"choices": [{"index": 0, "delta": {"content": "Hi"}}]})
        request.event({"error": {"code": 500, "message": "slot unavailable"}})
        request.end_stream()

    with StubServer(handle) as stub, pytest.raises(LlmServerError, match="slot unavailable"):
        list(OpenAILanguageModel(stub.url, "m").stream(HI, lambda: False))


def test_plain_openai_server_that_rejects_extra_fields_gets_them_dropped_once() -> None:
    def strict(request: StubRequest) -> None:
        extra = [k for k in ("cache_prompt", "chat_template_kwargs", "top_k") if k in request.body]
        if extra:
            said = f"Unrecognized request argument: {extra[0]}"
            request.json(400, {"error": {"message": said}})
        else:
            llama_chunks(request, ["Ok"])

    with StubServer(strict) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        assert list(llm.stream(HI, lambda: False)) == ["Ok"]
        assert list(llm.stream(HI, lambda: False)) == ["Ok"]
        assert len(stub.chat_bodies()) == 3  # one refusal, then plain requests only


def test_a_repeat_penalty_a_server_does_not_know_is_dropped_with_the_other_extras() -> None:
    def strict(request: StubRequest) -> None:
        if "repeat_penalty" in request.body:
            request.json(422, {"detail": "extra field not permitted: repeat_penalty"})
        else:
            llama_chunks(request, ["Ok"])

    with StubServer(strict) as stub:
        llm = OpenAILanguageModel(stub.url, "m", sampling=SamplingConfig(repeat_penalty=1.1))
        assert list(llm.stream(HI, lambda: False)) == ["Ok"]
        refused, plain = stub.chat_bodies()
    assert refused["repeat_penalty"] == 1.1
    assert "repeat_penalty" not in plain and "top_k" not in plain
    assert plain["temperature"] == 0.7


def test_context_overflow_drops_the_oldest_exchanges_and_stays_append_only() -> None:
    def small(request: StubRequest) -> None:
        if len(request.body["messages"]) > 10:
            too_long = "the request exceeds the available context size"
            request.json(400, {"error": {"message": too_long}})
        else:
            llama_chunks(request, ["Ok"])

    history = [SYSTEM]
    for i in range(6):
        history += [ChatMessage("user", f"q{i}"), ChatMessage("assistant", f"a{i}")]
    with StubServer(small) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        assert list(llm.stream([*history, ChatMessage("user", "now")], lambda: False)) == ["Ok"]
        sent = stub.chat_bodies()[-1]["messages"]
        assert [m["content"] for m in sent[:2]] == ["You are Hanasu.", "q3"]  # whole exchanges
        assert sent[-1]["content"] == "now"
        more = [*history, ChatMessage("user", "now"), ChatMessage("assistant", "Ok")]
        assert list(llm.stream([*more, ChatMessage("user", "next")], lambda: False)) == ["Ok"]
        again = stub.chat_bodies()[-1]["messages"]
    assert again[: len(sent)] == sent  # the cut stays where it was: the cache still fits


def test_model_name_defaults_to_the_servers_first() -> None:
    def handle(request: StubRequest) -> None:
        if request.path.endswith("/models"):
            request.json(200, {"data": [{"id": "served-model", "max_model_len": 32768}]})
        else:
            llama_chunks(request, ["Hello", " there", "."])

    with StubServer(handle) as stub:
        llm = OpenAILanguageModel(stub.url.removesuffix("/v1"))  # a bare host:port works
        info = llm.probe()
        assert stub.chat_bodies()[-1]["model"] == "served-model"
    assert info.model == "served-model" and info.context_length == 32768
    assert info.reply == "Hello there." and info.ttft_s > 0


def test_warm_reports_the_servers_counts() -> None:
    def handle(request: StubRequest) -> None:
        assert request.body["stream"] is False and request.body["max_tokens"] == 1
        usage = {"prompt_tokens": 40, "completion_tokens": 1}
        usage["prompt_tokens_details"] = {"cached_tokens": 32}  # type: ignore[assignment]
        request.json(200, {"choices": [{"message": {"content": "H"}}], "usage": usage})

    with StubServer(handle) as stub:
        stats = OpenAILanguageModel(stub.url, "m").warm([SYSTEM])
    assert stats == PromptStats(prompt_tokens=40, reused_tokens=32)


@pytest.mark.parametrize(
    ("typed", "base"),
    [
        ("gpu-box:8080", "http://gpu-box:8080/v1"),
        ("http://gpu-box:8080/", "http://gpu-box:8080/v1"),
        ("https://llm.example.org/v1", "https://llm.example.org/v1"),
        ("http://10.0.0.5:11434/v1/", "http://10.0.0.5:11434/v1"),
    ],
)
def test_api_base_from_what_the_user_typed(typed: str, base: str) -> None:
    assert api_base(typed) == base


def test_bad_urls_are_one_line() -> None:
    with pytest.raises(LlmServerError, match="no language model server URL"):
        OpenAILanguageModel("  ", "m")
    with pytest.raises(LlmServerError, match="not an http"):
        OpenAILanguageModel("ftp://user:pw@host/", "m")
    try:
        OpenAILanguageModel("ftp://user:pw@host/", "m")
    except LlmServerError as exc:
        assert "pw" not in str(exc)


def test_persona_temperature_and_the_servers_context_budget() -> None:
    def handle(request: StubRequest) -> None:
        if request.path.endswith("/models"):
            request.json(200, {"data": [{"id": "m", "max_model_len": 8192}]})
        elif request.body["stream"]:
            llama_chunks(request, ["Ok"])
        else:
            request.json(200, {"choices": [], "usage": {"prompt_tokens": 12}})

    with StubServer(handle) as stub:
        llm = OpenAILanguageModel(stub.url, "m", sampling=SamplingConfig(max_tokens=200))
        assert llm.prompt_budget() is None  # unknown until warm: never a network call here
        llm.warm([SYSTEM])
        assert llm.prompt_budget() == 8192 - 200
        llm.set_temperature(0.2)
        list(llm.stream(HI, lambda: False))
        llm.set_temperature(None)
        list(llm.stream(HI, lambda: False))
        first, second = (b["temperature"] for b in stub.chat_bodies() if b["stream"])
    assert (first, second) == (0.2, 0.7)
