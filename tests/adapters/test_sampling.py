"""One SamplingConfig drives both language models: the in-process model samples with exactly
what the server adapter sends, a persona's temperature reaches both, and None restores the
config's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.adapters.llama_llm import LlamaLanguageModel
from app.adapters.openai_llm import OpenAILanguageModel
from app.adapters.sampling import SamplingConfig
from app.core.ports import ChatMessage
from tests.support.openai_server import StubRequest, StubServer, llama_chunks

HI = [ChatMessage("system", "Be brief."), ChatMessage("user", "Hi")]
CONFIG = SamplingConfig(
    temperature=0.3, top_k=12, top_p=0.8, min_p=0.1, repeat_penalty=1.1, max_tokens=20, seed=5
)
SERVER_NAME = {"temp": "temperature"}
"""llama-cpp-python's name -> the server's, where they differ."""


class Spy:
    """Records the sampling keyword arguments of each ``Llama.generate`` call."""

    def __init__(self, llm: LlamaLanguageModel) -> None:
        self.calls: list[dict[str, Any]] = []
        real = llm._llm.generate

        def generate(tokens: list[int], **kwargs: Any) -> Any:
            self.calls.append({k: v for k, v in kwargs.items() if k != "reset"})
            return real(tokens, **kwargs)

        llm._llm.generate = generate


def in_process_sampling(llm: LlamaLanguageModel) -> dict[str, Any]:
    spy = Spy(llm)
    assert list(llm.stream(HI, lambda: False)) == ["Hi", " there", "!"]
    [kwargs] = spy.calls
    return {SERVER_NAME.get(k, k): v for k, v in kwargs.items()}


def server_bodies(config: SamplingConfig, temperatures: list[float | None]) -> list[Any]:
    def handle(request: StubRequest) -> None:
        llama_chunks(request, ["Hi", " there", "!"])

    with StubServer(handle) as stub:
        llm = OpenAILanguageModel(stub.url, "m", sampling=config)
        for temperature in temperatures:
            llm.set_temperature(temperature)
            assert list(llm.stream(HI, lambda: False)) == ["Hi", " there", "!"]
        return stub.chat_bodies()


def test_both_adapters_sample_alike_from_one_config(tiny_llama_gguf: Path) -> None:
    llama = LlamaLanguageModel(tiny_llama_gguf, n_ctx=512, sampling=CONFIG)
    assert llama._llm._seed == 5  # llama.cpp takes the seed when the model loads
    sampled = in_process_sampling(llama)
    [body] = server_bodies(CONFIG, [None])
    assert sampled == {k: body[k] for k in sampled}
    assert sampled == {
        "temperature": 0.3, "top_k": 12, "top_p": 0.8, "min_p": 0.1, "repeat_penalty": 1.1
    }
    assert (body["max_tokens"], body["seed"]) == (20, 5)
    assert llama.prompt_budget() == 512 - 20


def test_a_persona_temperature_reaches_both_and_none_restores_the_config(
    tiny_llama_gguf: Path,
) -> None:
    llama = LlamaLanguageModel(tiny_llama_gguf, n_ctx=512, sampling=CONFIG)
    llama.set_temperature(1.2)
    hot = in_process_sampling(llama)
    llama.set_temperature(None)
    back = in_process_sampling(llama)
    bodies = server_bodies(CONFIG, [1.2, None])
    assert [hot["temperature"], back["temperature"]] == [1.2, 0.3]
    assert [b["temperature"] for b in bodies] == [1.2, 0.3]
    assert {**hot, "temperature": 0.3} == back  # nothing else moved


def test_the_defaults_are_the_apps() -> None:
    default = SamplingConfig()
    assert default.llama_kwargs() == {
        "temp": 0.7, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0
    }
    assert (default.max_tokens, default.seed) == (200, None)
    assert default.llama_load_kwargs() == {}


def test_a_server_is_sent_the_penalty_and_seed_only_when_set() -> None:
    [plain] = server_bodies(SamplingConfig(), [None])
    assert "repeat_penalty" not in plain and "seed" not in plain
    assert (plain["temperature"], plain["max_tokens"]) == (0.7, 200)


def test_every_in_process_setting_has_a_server_field() -> None:
    named = {SERVER_NAME.get(k, k) for k in CONFIG.llama_kwargs()}
    assert named <= set(CONFIG.openai_fields())
