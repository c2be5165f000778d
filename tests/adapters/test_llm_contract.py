"""One LanguageModel contract, run against the fake and the real llama.cpp adapter.

The real one uses the embedded SmolLM2-135M-Instruct; tokens are counted with the
model's own tokenizer (the fake counts one word as one token). Further tests use tiny
built GGUFs whose reply is known exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.adapters.errors import EngineLoadError
from app.adapters.fakes import FakeLanguageModel
from app.core.ports import ChatMessage, LanguageModel, PromptStats

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


@pytest.fixture(
    scope="module",
    params=[pytest.param("fake"), pytest.param("real", marks=pytest.mark.slow)],
)
def subject(request: pytest.FixtureRequest) -> Subject:
    if request.param == "fake":
        return Subject(FakeLanguageModel(), lambda piece: len(piece.split()))
    from app.adapters.llama_llm import LlamaLanguageModel

    real = LlamaLanguageModel(seed=7, max_tokens=60)
    return Subject(real, lambda piece: len(real.tokenize(piece)))


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
    pieces, stats = run(subject.llm, [SYSTEM, STORY])
    assert len(pieces) > 1
    assert all(piece for piece in pieces)
    assert all(subject.count_tokens(piece) <= 2 for piece in pieces), pieces
    assert not pieces[0][:1].isspace()
    assert len(stats) == 1 and stats[0].prompt_tokens > 0


def test_cancel_stops_within_one_token(subject: Subject) -> None:
    pieces, _ = run(subject.llm, [SYSTEM, STORY], cancel_after=3)
    assert 3 <= len(pieces) <= 4


def test_second_turn_reuses_the_first_prompt(subject: Subject) -> None:
    first = [SYSTEM, ChatMessage("user", "Hello! Who are you?")]
    pieces, stats1 = run(subject.llm, first)
    second = [
        *first,
        ChatMessage("assistant", "".join(pieces)),
        ChatMessage("user", "Nice. What do you like?"),
    ]
    _, stats2 = run(subject.llm, second)
    assert stats2[0].prompt_tokens > stats1[0].prompt_tokens
    assert stats2[0].reused_tokens >= stats1[0].prompt_tokens - 4


def test_warm_then_stream_reuses_the_warmed_prefix(subject: Subject) -> None:
    persona = ChatMessage("system", "You are Kumo, a calm companion who speaks slowly.")
    warmed = subject.llm.warm([persona])
    assert warmed.prompt_tokens > 0
    assert subject.llm.warm([persona]).reused_tokens == warmed.prompt_tokens
    _, stats = run(subject.llm, [persona, ChatMessage("user", "Hi Kumo.")], cancel_after=1)
    assert stats[0].reused_tokens >= warmed.prompt_tokens


# ---- real model only ----------------------------------------------------------------


@pytest.mark.slow
def test_real_warm_prefix_cuts_time_to_first_token() -> None:
    """Best of three each way: the machine is shared, single timings are noisy."""
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(seed=1, max_tokens=5)

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

    llm = LlamaLanguageModel(seed=3, max_tokens=200, temperature=0.2)
    pieces, _ = run(llm, [SYSTEM, ChatMessage("user", "Say hello in one short sentence.")])
    reply = "".join(pieces)
    assert reply and "<|im_end|>" not in reply and "<|im_start|>" not in reply


# ---- tiny built GGUF (llama arch): the reply is known exactly -------------------------


def test_tiny_gguf_streams_the_scripted_reply(tiny_llama_gguf: Path) -> None:
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(tiny_llama_gguf, n_ctx=512, max_tokens=20, seed=1)
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

    llm = LlamaLanguageModel(tiny_llama_gguf, n_ctx=512, max_tokens=20, seed=1)
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

    llm = LlamaLanguageModel(tiny_llama_gguf, n_ctx=256, max_tokens=20, seed=1)
    history = [ChatMessage("system", "Be brief.")]
    for i in range(30):
        history += [ChatMessage("user", f"question {i}"), ChatMessage("assistant", "Hi there!")]
    pieces, stats = run(llm, [*history, ChatMessage("user", "last")])
    assert pieces == ["Hi", " there", "!"]
    assert stats[0].prompt_tokens <= 256 - 20


def test_stop_filter_holds_back_gemma_end_markers() -> None:
    from app.adapters.llama_llm import _StopFilter

    stop = _StopFilter(["<eos>", "<end_of_turn>", "<turn|>"])
    out = [stop.feed(p) for p in ["Hello", " there", "<", "turn", "|>", " never"]]
    assert out == ["Hello", " there", "", "", "", ""]
    assert stop.stopped
    plain = _StopFilter(["<turn|>"])
    assert [plain.feed(p) for p in ["a <", "b"]] == ["a ", "<b"]


def test_base_model_without_chat_template_is_refused(
    tmp_path: Path, gguf_writer: Callable[..., Path]
) -> None:
    path = gguf_writer(tmp_path / "base.gguf", template=None)
    from app.adapters.llama_llm import LlamaLanguageModel

    with pytest.raises(EngineLoadError, match=r"base\.gguf"):
        LlamaLanguageModel(path)
