"""The Gemma 4 code path of the LLM adapter on a tiny random-weight ``gemma4`` GGUF.

The file (built by ``gguf_builders.write_tiny_gemma4``, about 0.7 MB) has what the real
Gemma 4 26B-A4B has structurally: a sliding-window layer and a full-attention layer
with different head sizes, a mixture-of-experts block beside the dense MLP, proportional
RoPE factors, final-logit soft-capping, Gemma's special tokens (``<eos>`` as EOS,
``<turn|>`` as end of turn) and a Gemma 4-format chat template with a real system turn.
llama.cpp loads it through the real ``gemma4`` graph; the weights are built so that the
reply is known (see ``gguf_builders``). The vocabulary is SentencePiece byte-fallback,
not the real Gemma 4 tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.adapters.llama_llm import LlamaLanguageModel
from app.adapters.sampling import SamplingConfig
from app.core.ports import ChatMessage, PromptStats
from tests.adapters.gguf_builders import GEMMA4_LEADING, write_tiny_gemma4

SYSTEM = ChatMessage(
    "system",
    "You are Hanasu, a cheerful voice companion. You answer in short, warm sentences, "
    "and you never use lists or markdown because everything you write is spoken aloud.",
)
HELLO = ChatMessage("user", "Hello! Who are you?")
BOS_ID = GEMMA4_LEADING.index("<bos>")


@pytest.fixture(scope="module")
def gguf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gemma4")


@pytest.fixture(scope="module")
def gemma4(gguf_dir: Path) -> LlamaLanguageModel:
    path = write_tiny_gemma4(gguf_dir / "tiny-gemma4.gguf")
    return LlamaLanguageModel(path, n_ctx=1024, sampling=SamplingConfig(max_tokens=20, seed=1))


def run(llm: LlamaLanguageModel, messages: list[ChatMessage]) -> tuple[list[str], PromptStats]:
    stats: list[PromptStats] = []
    pieces = list(llm.stream(messages, lambda: False, stats.append))
    assert len(stats) == 1
    return pieces, stats[0]


def test_loads_as_gemma4_with_gemma_stop_strings(gemma4: LlamaLanguageModel) -> None:
    assert gemma4.architecture == "gemma4"
    assert gemma4.stop_strings == ("<eos>", "<end_of_turn>", "<turn|>")


def test_prompt_is_the_files_template_with_a_real_system_turn(
    gemma4: LlamaLanguageModel,
) -> None:
    text = gemma4.render([ChatMessage("system", "S"), ChatMessage("user", "U")])
    assert text == (
        "<bos><|turn>system\nS<turn|>\n<|turn>user\nU<turn|>\n"
        "<|turn>model\n<|channel>thought\n<channel|>"
    )
    history = gemma4.render(
        [ChatMessage("user", "U"), ChatMessage("assistant", "A")], add_generation_prompt=False
    )
    assert history == "<bos><|turn>user\nU<turn|>\n<|turn>model\nA<turn|>\n"
    tokens = gemma4.tokenize_prompt(text)
    assert tokens[0] == BOS_ID and tokens.count(BOS_ID) == 1  # the template's BOS, once


def test_streams_the_reply_and_stops_at_end_of_turn(gemma4: LlamaLanguageModel) -> None:
    pieces, stats = run(gemma4, [SYSTEM, HELLO])
    # " Hi there!" then <turn|>: leading space stripped, the end of turn not spoken.
    assert pieces == ["Hi", " there", "!"]
    assert stats.prompt_tokens > 100  # longer than the 32-token sliding window


def test_max_tokens_ends_the_reply(gguf_dir: Path) -> None:
    path = write_tiny_gemma4(gguf_dir / "short.gguf")
    llm = LlamaLanguageModel(path, n_ctx=512, sampling=SamplingConfig(max_tokens=2, seed=1))
    pieces, _ = run(llm, [SYSTEM, HELLO])
    assert pieces == ["Hi", " there"]


@pytest.mark.parametrize(
    ("reply", "name"),
    [
        (("\u2581Hi", "\u2581there", "!", "<tu", "rn|>", "\u2581leaked"), "turn"),
        (("\u2581Hi", "\u2581there", "!", "<end_of", "_turn>", "\u2581leaked"), "eot"),
    ],
)
def test_stop_strings_spelled_in_plain_text_never_leak(
    gguf_dir: Path, reply: tuple[str, ...], name: str
) -> None:
    """The end marker comes as ordinary text pieces, not the control token."""
    path = write_tiny_gemma4(gguf_dir / f"spelled-{name}.gguf", reply_tokens=reply)
    llm = LlamaLanguageModel(path, n_ctx=512, sampling=SamplingConfig(max_tokens=20, seed=1))
    pieces, _ = run(llm, [SYSTEM, HELLO])
    assert pieces == ["Hi", " there", "!"]


def test_end_of_turn_control_token_stops_without_eot_metadata(gguf_dir: Path) -> None:
    """A file that does not name ``<turn|>`` as end of turn still stops on it."""
    path = write_tiny_gemma4(gguf_dir / "no-eot.gguf", eot_token=None)
    llm = LlamaLanguageModel(path, n_ctx=512, sampling=SamplingConfig(max_tokens=20, seed=1))
    pieces, _ = run(llm, [SYSTEM, HELLO])
    assert pieces == ["Hi", " there", "!"]
    assert not any("<" in p for p in pieces)


def test_second_turn_reuses_the_cached_prefix(
    gemma4: LlamaLanguageModel, normalise: Callable[[str], str]
) -> None:
    first = [SYSTEM, HELLO]
    pieces, stats1 = run(gemma4, first)
    reply = "".join(pieces)
    assert normalise(reply) == "hi there"
    second = [*first, ChatMessage("assistant", reply), ChatMessage("user", "Nice. And you?")]
    again, stats2 = run(gemma4, second)
    assert again == ["Hi", " there", "!"]
    assert stats2.prompt_tokens > stats1.prompt_tokens
    # Everything up to the first turn's generation prompt is reused (the empty thought
    # block is not part of the history, so the cache diverges there).
    assert 0 < stats2.reused_tokens < stats1.prompt_tokens
    assert stats2.reused_tokens >= stats1.prompt_tokens - len(
        gemma4.tokenize_prompt("<|turn>model\n<|channel>thought\n<channel|>")
    )


def test_warm_prefix_is_reused_by_the_next_stream(gemma4: LlamaLanguageModel) -> None:
    persona = ChatMessage("system", "You are Kumo, a calm companion who speaks slowly.")
    warmed = gemma4.warm([persona])
    assert warmed.prompt_tokens > 0
    assert gemma4.warm([persona]).reused_tokens == warmed.prompt_tokens
    pieces, stats = run(gemma4, [persona, ChatMessage("user", "Hi Kumo.")])
    assert pieces == ["Hi", " there", "!"]
    assert stats.reused_tokens >= warmed.prompt_tokens
