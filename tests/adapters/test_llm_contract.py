"""One LanguageModel contract, run against the fake, the real llama.cpp adapter, and the
server adapter talking to a real ``llama_cpp.server`` on 127.0.0.1.

The real ones use the embedded SmolLM2-135M-Instruct; tokens are counted with the
model's own tokenizer (the server's, over HTTP, for the server; the fake counts one word
as one token). ``llama_cpp.server`` reports no prompt counts in a stream, so for it the
prompt and cache-hit counts come from the server's own log, and the adapter must not
make any up. Further tests use tiny built GGUFs whose reply is known exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.adapters.errors import EngineLoadError
from app.adapters.fakes import FakeLanguageModel
from app.adapters.sampling import SamplingConfig
from app.core.ports import ChatMessage, LanguageModel, PromptStats
from tests.support.openai_server import MODEL_ALIAS, LlamaCppServer, llama_cpp_server

SYSTEM = ChatMessage(
    "system",
    "You are Hanasu, a cheerful voice companion. You answer in full sentences and like "
    "telling long stories about animals, the sea and the mountains.",
)
STORY = ChatMessage("user", "Tell me a long story about a fox who lives by the sea.")


@dataclass
class Subject:
    llm: LanguageModel
    count_tokens: Callable[[str], int]
    server: LlamaCppServer | None = None

    def mark(self) -> int:
        return self.server.mark() if self.server is not None else 0

    def prompt(self, reported: list[PromptStats], mark: int) -> PromptStats:
        """The prompt counts of the request since ``mark``: as the engine reported them,
        or, from ``llama_cpp.server`` (which reports none), as the server logged them."""
        if self.server is None:
            assert len(reported) == 1
            return reported[0]
        assert reported == [], "llama_cpp.server reports no counts: none may be made up"
        return self.server.prompt_since(mark)


@pytest.fixture(
    scope="module",
    params=[
        pytest.param("fake"),
        pytest.param("real", marks=pytest.mark.slow),
        pytest.param("server", marks=pytest.mark.slow),
    ],
)
def subject(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Subject]:
    if request.param == "fake":
        yield Subject(FakeLanguageModel(), lambda piece: len(piece.split()))
        return
    if request.param == "server":
        from app.adapters.openai_llm import OpenAILanguageModel

        with llama_cpp_server(tmp_path_factory.mktemp("server")) as server:
            llm = OpenAILanguageModel(
                server.url, MODEL_ALIAS, sampling=SamplingConfig(seed=7, max_tokens=60)
            )

            def count(piece: str) -> int:
                n = llm.count_tokens(piece)
                assert n is not None, "the server has no tokenize endpoint"
                return n

            yield Subject(llm, count, server)
            llm.close()
        return
    from app.adapters.llama_llm import LlamaLanguageModel

    real = LlamaLanguageModel(sampling=SamplingConfig(seed=7, max_tokens=60))
    yield Subject(real, lambda piece: len(real.tokenize(piece)))


def run(
    llm: LanguageModel, messages: list[ChatMessage], cancel_after: int | None = None
) -> tuple[list[str], list[PromptStats]]:
    pieces: list[str] = []
    stats: list[PromptStats] = []

    def cancelled() -> bool:
        return cancel_after is not None and len(pieces) >= cancel_after

    def on_prompt(s: PromptStats) -> None:
        assert not pieces, "on_prompt must come before the first token"
        stats.append(s)

    for piece in llm.stream(messages, cancelled, on_prompt):
        pieces.append(piece)
    return pieces, stats


def test_streams_token_by_token(subject: Subject) -> None:
    mark = subject.mark()
    pieces, stats = run(subject.llm, [SYSTEM, STORY])
    assert len(pieces) > 1
    assert all(piece for piece in pieces)
    assert all(subject.count_tokens(piece) <= 2 for piece in pieces), pieces
    assert not pieces[0][:1].isspace()
    assert subject.prompt(stats, mark).prompt_tokens > 0


def test_cancel_stops_within_one_token(subject: Subject) -> None:
    mark = subject.mark()
    pieces, _ = run(subject.llm, [SYSTEM, STORY], cancel_after=3)
    assert 3 <= len(pieces) <= 4
    if subject.server is not None:
        # the server saw the stream closed and left its generation loop ("disconnected"
        # is printed by llama_cpp.server exactly there) instead of making all 60 tokens
        assert subject.server.wait_for("disconnected", mark), subject.server.log()[mark:]


def test_second_turn_reuses_the_first_prompt(subject: Subject) -> None:
    first = [SYSTEM, ChatMessage("user", "Hello! Who are you?")]
    mark1 = subject.mark()
    pieces, stats1 = run(subject.llm, first)
    prompt1 = subject.prompt(stats1, mark1)
    second = [
        *first,
        ChatMessage("assistant", "".join(pieces)),
        ChatMessage("user", "Nice. What do you like?"),
    ]
    mark2 = subject.mark()
    _, stats2 = run(subject.llm, second)
    prompt2 = subject.prompt(stats2, mark2)
    assert prompt2.prompt_tokens > prompt1.prompt_tokens
    assert prompt2.reused_tokens >= prompt1.prompt_tokens - 4


def test_warm_then_stream_reuses_the_warmed_prefix(subject: Subject) -> None:
    persona = ChatMessage("system", "You are Kumo, a calm companion who speaks slowly.")
    warmed = subject.llm.warm([persona])
    assert warmed.prompt_tokens > 0
    mark = subject.mark()
    again = subject.llm.warm([persona])
    if subject.server is None:
        assert again.reused_tokens == warmed.prompt_tokens
    else:  # the server's warm prompt ends in a short user turn: all of it is cached
        assert subject.server.fully_cached_since(mark) or (
            subject.server.prompt_since(mark).reused_tokens >= warmed.prompt_tokens - 1
        )
    mark = subject.mark()
    _, stats = run(subject.llm, [persona, ChatMessage("user", "Hi Kumo.")], cancel_after=1)
    # in-process warm evaluates the persona alone; the server's warm prompt also holds a
    # short user turn ("Hello.", 4 tokens and the assistant header) that this one lacks
    slack = 0 if subject.server is None else 8
    assert subject.prompt(stats, mark).reused_tokens >= warmed.prompt_tokens - slack


# ---- real model only ----------------------------------------------------------------


@pytest.mark.slow
def test_real_warm_prefix_cuts_time_to_first_token() -> None:
    """Best of three each way: the machine is shared, single timings are noisy."""
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(sampling=SamplingConfig(seed=1, max_tokens=5))

    def ttft(persona: ChatMessage, warm: bool) -> float:
        if warm:
            llm.warm([persona])
        stats: list[PromptStats] = []
        started = time.perf_counter()
        for _ in llm.stream([persona, ChatMessage("user", "Hi!")], lambda: False, stats.append):
            break
        elapsed = time.perf_counter() - started
        assert (stats[0].reused_tokens > 300) == warm, stats
        return elapsed

    # A different first word per run, so a "cold" prompt shares nothing with the cache.
    personas = [ChatMessage("system", f"{w} " + SYSTEM.content * 12) for w in "ABCDEF"]
    cold = min(ttft(p, warm=False) for p in personas[:3])
    warm = min(ttft(p, warm=True) for p in personas[3:])
    assert warm < cold / 2, f"warm {warm * 1000:.0f} ms vs cold {cold * 1000:.0f} ms"


@pytest.mark.slow
def test_real_embedded_model_stops_at_end_of_turn() -> None:
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(sampling=SamplingConfig(seed=3, max_tokens=200, temperature=0.2))
    pieces, _ = run(llm, [SYSTEM, ChatMessage("user", "Say hello in one short sentence.")])
    reply = "".join(pieces)
    assert reply and "<|im_end|>" not in reply and "<|im_start|>" not in reply


# ---- tiny built GGUF (llama arch): the reply is known exactly -------------------------


def test_tiny_gguf_streams_the_scripted_reply(tiny_llama_gguf: Path) -> None:
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(
        tiny_llama_gguf, n_ctx=512, sampling=SamplingConfig(max_tokens=20, seed=1)
    )
    pieces, stats = run(llm, [ChatMessage("system", "Be brief."), ChatMessage("user", "Hi")])
    # The model says " Hi there!" then its end-of-turn token: leading space stripped,
    # the end token neither spoken nor leaked as text.
    assert pieces == ["Hi", " there", "!"]
    assert stats[0].reused_tokens == 0


def test_tiny_gguf_prompt_uses_the_embedded_template(tiny_llama_gguf: Path) -> None:
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(tiny_llama_gguf, n_ctx=512)
    text = llm.render([ChatMessage("system", "S"), ChatMessage("user", "U")])
    assert text == (
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
    )
    assert llm.stop_strings == ("<|im_end|>",)


def test_tiny_gguf_newer_stream_supersedes_an_unfinished_one(tiny_llama_gguf: Path) -> None:
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(
        tiny_llama_gguf, n_ctx=512, sampling=SamplingConfig(max_tokens=20, seed=1)
    )
    messages = [ChatMessage("system", "Be brief."), ChatMessage("user", "Hi")]
    old = llm.stream(messages, lambda: False)
    assert next(old) == "Hi"
    new = llm.stream(messages, lambda: False)
    assert list(old) == []  # the KV cache now belongs to the new stream
    assert list(new) == ["Hi", " there", "!"]


def test_tiny_gguf_cancelled_before_start_yields_nothing(tiny_llama_gguf: Path) -> None:
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(tiny_llama_gguf, n_ctx=512)
    assert list(llm.stream([ChatMessage("user", "Hi")], lambda: True)) == []


def test_tiny_gguf_drops_oldest_turns_when_the_context_is_full(tiny_llama_gguf: Path) -> None:
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(
        tiny_llama_gguf, n_ctx=256, sampling=SamplingConfig(max_tokens=20, seed=1)
    )
    history = [ChatMessage("system", "Be brief.")]
    for i in range(30):
        history += [ChatMessage("user", f"question {i}"), ChatMessage("assistant", "Hi there!")]
    pieces, stats = run(llm, [*history, ChatMessage("user", "last")])
    assert pieces == ["Hi", " there", "!"]
    assert stats[0].prompt_tokens <= 256 - 20


def test_base_model_without_chat_template_is_refused(
    tmp_path: Path, gguf_writer: Callable[..., Path]
) -> None:
    path = gguf_writer(tmp_path / "base.gguf", template=None)
    from app.adapters.llama_llm import LlamaLanguageModel

    with pytest.raises(EngineLoadError, match=r"base\.gguf"):
        LlamaLanguageModel(path)


def test_a_two_core_machine_decodes_on_one_core() -> None:
    """Inside the pipeline one decode thread beat two on 2 cores (8 vs 10-16 ms a token:
    the audio and stage threads preempt the second); bigger machines keep llama-cpp-python's
    own choice (half the cores)."""
    from app.adapters.llama_load import default_threads

    assert default_threads(1) == 1
    assert default_threads(2) == 1
    assert default_threads(16) is None


def test_the_embedded_model_loads_with_the_chosen_thread_count() -> None:
    import os

    from app.adapters.llama_llm import LlamaLanguageModel
    from app.adapters.llama_load import default_threads

    llm = LlamaLanguageModel()
    expected = default_threads() or max(1, (os.cpu_count() or 2) // 2)
    assert llm._llm.context_params.n_threads == expected  # what llama.cpp was given
    assert llm._llm.context_params.n_threads_batch == os.cpu_count()  # the prompt: every core
