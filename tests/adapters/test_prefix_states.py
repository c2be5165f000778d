"""A persona switched back to has its prefix restored, not evaluated again, and answers
exactly as it did before (the embedded SmolLM2-135M, greedy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.adapters.sampling import SamplingConfig
from app.core.ports import ChatMessage

REPO = Path(__file__).resolve().parents[2]


def _system_prompt(persona: str) -> ChatMessage:
    import tomllib

    with open(REPO / "assets" / "personas" / f"{persona}.toml", "rb") as file:
        return ChatMessage("system", tomllib.load(file)["system_prompt"])


@pytest.mark.slow
def test_switching_back_restores_the_persona_and_answers_as_before() -> None:
    from app.adapters.llama_llm import LlamaLanguageModel

    llm = LlamaLanguageModel(n_ctx=2048, sampling=SamplingConfig(temperature=0.0, max_tokens=16))
    yui, kai = [_system_prompt("yui")], [_system_prompt("kai")]
    question = ChatMessage("user", "こんにちは！元気？")

    def answer() -> str:
        return "".join(llm.stream([*yui, question], cancelled=lambda: False))

    first = llm.warm(yui)
    assert first.reused_tokens == 0 and first.prompt_tokens > 200  # three tokens a kana
    before = answer()
    assert llm.warm(kai).reused_tokens < 10  # another persona: evaluated
    again = llm.warm(yui)
    assert again.prompt_tokens == first.prompt_tokens
    assert again.reused_tokens == first.prompt_tokens  # restored, nothing evaluated
    assert answer() == before

    # a conversation that went on from the saved prefix restores the prefix, then
    # evaluates only what follows it
    llm.warm(kai)
    longer = llm.warm([*yui, question, ChatMessage("assistant", before)])
    assert first.prompt_tokens <= longer.reused_tokens < longer.prompt_tokens


def test_nothing_saved_restores_nothing() -> None:
    from app.adapters.prefix_states import PrefixStates

    states = PrefixStates()
    assert states.restore(object(), [1, 2, 3], held=2) == 2 and len(states) == 0


def test_a_sliding_window_models_prefix_is_restored_too(tmp_path: Path) -> None:
    """Gemma 4 keeps a sliding-window cache beside the full one (the production model):
    both come back, and the reply after the restore is the one before it."""
    from app.adapters.llama_llm import LlamaLanguageModel
    from tests.adapters.gguf_builders import write_tiny_gemma4

    llm = LlamaLanguageModel(write_tiny_gemma4(tmp_path / "tiny-gemma4.gguf"), n_ctx=1024,
                             sampling=SamplingConfig(max_tokens=20, seed=1))
    long_persona = [ChatMessage("system", "You are a patient guide. " * 20)]
    other = [ChatMessage("system", "You are brief. " * 20)]
    hello = ChatMessage("user", "Hello!")
    first = llm.warm(long_persona)
    assert first.prompt_tokens > 64  # past the 32-token window, worth keeping
    before = list(llm.stream([*long_persona, hello], lambda: False))
    llm.warm(other)
    assert llm.warm(long_persona).reused_tokens == first.prompt_tokens
    assert list(llm.stream([*long_persona, hello], lambda: False)) == before
