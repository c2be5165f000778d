"""Engine selection: the choice the settings make, the eSpeak fallback voice when the found
voice cannot load."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from app.adapters.errors import EngineLoadError
from app.engines import EngineChoice, build_engines
from app.models.errors import ModelError
from app.storage.settings import Settings


@pytest.mark.slow
def test_broken_default_voice_falls_back_to_espeak(monkeypatch: pytest.MonkeyPatch) -> None:
    piper_module = importlib.import_module("app.adapters.piper_tts")

    def broken(*args: object, **kwargs: object) -> None:
        raise EngineLoadError("voice file en_US-joe-medium.onnx is corrupt")

    monkeypatch.setattr(piper_module, "PiperSynthesizer", broken)
    notes: list[str] = []
    engines = build_engines(EngineChoice(), progress=notes.append)
    assert type(engines.tts.english).__name__ == "EspeakSynthesizer"  # type: ignore[attr-defined]
    assert any("eSpeak" in note for note in notes)
    audio = engines.tts.synthesize("Hello there.")
    assert float(np.max(np.abs(audio))) > 0.05


def test_an_explicit_voice_that_cannot_load_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "voice.onnx"
    with pytest.raises((EngineLoadError, ModelError), match=r"voice\.onnx"):
        build_engines(EngineChoice(tts=missing))


def test_engine_choice_from_settings() -> None:
    choice = EngineChoice.from_settings(
        Settings(llm_path="~/m/llm.gguf", tts_path="/m/voice.onnx", n_gpu_layers=20,
                 tts_voice="af_sky", tts_speed=1.5),
    )
    assert choice.fake is False
    assert choice.llm == Path("~/m/llm.gguf").expanduser()
    assert choice.asr is None
    assert choice.tts == Path("/m/voice.onnx")
    assert (choice.n_gpu_layers, choice.tts_voice, choice.tts_speed) == (20, "af_sky", 1.5)
    assert choice.llm_url is None
    assert EngineChoice.from_settings(Settings(), fake=True) == EngineChoice(fake=True)


def test_engine_choice_uses_the_server_only_when_chosen() -> None:
    server = {"llm_server_url": "http://127.0.0.1:8080/v1", "llm_server_model": "m"}
    chosen = EngineChoice.from_settings(Settings(llm_backend="server", **server))
    assert (chosen.llm_url, chosen.llm_model) == ("http://127.0.0.1:8080/v1", "m")
    assert EngineChoice.from_settings(Settings(llm_backend="server")).llm_url == ""
    assert EngineChoice.from_settings(Settings(**server)).llm_url is None


def test_build_engines_names_each_role_as_it_starts_loading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.adapters import fakes, llama_llm, silero_vad, whisper_asr

    def broken_llm(*args: object, **kwargs: object) -> None:
        raise EngineLoadError("llm file is corrupt")

    monkeypatch.setattr(silero_vad, "SileroVad", lambda path: fakes.FakeVoiceActivity())
    monkeypatch.setattr(whisper_asr, "WhisperRecognizer", lambda path: fakes.FakeRecognizer())
    monkeypatch.setattr(llama_llm, "LlamaLanguageModel", broken_llm)
    roles: list[str] = []
    with pytest.raises(EngineLoadError, match="llm file is corrupt"):
        build_engines(EngineChoice(), on_loading=roles.append)
    assert roles == ["vad", "asr", "llm"]


def test_a_chosen_tier_names_the_variants_to_load() -> None:
    light = EngineChoice.from_settings(Settings(model_tier="cpu-small"))
    assert (light.variant("llm"), light.variant("asr"), light.variant("tts")) == (
        "e2b", "embedded", "embedded")
    assert EngineChoice.from_settings(Settings()).variant("llm") is None
    assert EngineChoice.from_settings(Settings(model_tier="gone")).variant("llm") is None


@pytest.mark.slow
def test_a_seed_makes_two_loads_answer_alike() -> None:
    """``--llm-seed`` reaches the local model: two benches with one seed sample the same
    reply to the same words (at the app's temperature), so a before/after compares code,
    not the model's mood."""
    from app.core.ports import ChatMessage

    messages = [ChatMessage("system", "You are Hana, a cheerful companion."),
                ChatMessage("user", "Tell me something about the sea.")]

    def reply() -> str:
        llm = build_engines(EngineChoice(llm_seed=11)).llm
        return "".join(piece for piece, _ in zip(llm.stream(messages, lambda: False),
                                                  range(24), strict=False))

    first = reply()
    assert len(first.split()) >= 5
    assert reply() == first
