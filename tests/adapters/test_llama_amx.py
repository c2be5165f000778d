"""llama.cpp's AMX buffers are used only where a token was evaluated with them.

A llama-cpp-python built with AMX kernels crashed with a general protection fault on the
first token on this kind of virtual machine (every reply, every LLM test). The decision
is tested with stand-in builds and probes; the probe, the wrapper and the adapter run on
the real llama.cpp with the embedded SmolLM2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.adapters.llama_amx import (
    OVERRIDE_ENV,
    build_has_amx,
    extra_buffers_allowed,
    probe_in_child,
    without_extra_buffers,
)
from app.adapters.llama_llm import LlamaLanguageModel
from app.adapters.llama_load import embedded_model_path
from app.adapters.sampling import SamplingConfig
from app.core.ports import ChatMessage

MODEL = Path("model.gguf")


def _build(info: bytes, version: str = "0.3.36") -> Any:
    return SimpleNamespace(llama_print_system_info=lambda: info, __version__=version)


AMX = _build(b"CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |")
NO_AMX = _build(b"CPU : AVX2 = 1 | AVX512 = 1 | REPACK = 1 |")


class Probe:
    def __init__(self, works: bool) -> None:
        self.works = works
        self.calls: list[tuple[Path, int]] = []

    def __call__(self, model: Path, layers: int) -> bool:
        self.calls.append((model, layers))
        return self.works


@pytest.fixture(autouse=True)
def _no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(OVERRIDE_ENV, raising=False)


def test_the_build_says_whether_it_has_amx() -> None:
    assert build_has_amx(AMX)
    assert not build_has_amx(NO_AMX)


def test_no_amx_in_the_build_needs_no_probe(tmp_path: Path) -> None:
    probe = Probe(works=False)
    assert extra_buffers_allowed(NO_AMX, MODEL, 0, tmp_path / "v.json", probe)
    assert probe.calls == []
    assert not (tmp_path / "v.json").exists()


@pytest.mark.parametrize("works", [True, False])
def test_amx_is_probed_once_and_the_verdict_remembered(tmp_path: Path, works: bool) -> None:
    verdicts = tmp_path / "data" / "v.json"
    probe = Probe(works)
    assert extra_buffers_allowed(AMX, MODEL, 7, verdicts, probe) is works
    assert probe.calls == [(MODEL, 7)]
    assert extra_buffers_allowed(AMX, MODEL, 7, verdicts, probe) is works  # remembered
    assert probe.calls == [(MODEL, 7)]
    assert list(json.loads(verdicts.read_text()).values()) == [works]


def test_a_new_llama_cpp_version_is_probed_again(tmp_path: Path) -> None:
    verdicts = tmp_path / "v.json"
    extra_buffers_allowed(AMX, MODEL, 0, verdicts, Probe(works=False))
    probe = Probe(works=True)
    assert extra_buffers_allowed(_build(b"AMX_INT8 = 1", "0.4.0"), MODEL, 0, verdicts, probe)
    assert len(probe.calls) == 1


def test_a_damaged_verdict_file_is_probed_again(tmp_path: Path) -> None:
    verdicts = tmp_path / "v.json"
    verdicts.write_text("{not json")
    probe = Probe(works=False)
    assert not extra_buffers_allowed(AMX, MODEL, 0, verdicts, probe)
    assert len(probe.calls) == 1


def test_an_unwritable_verdict_still_decides(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert not extra_buffers_allowed(AMX, MODEL, 0, blocker / "v.json", Probe(works=False))


@pytest.mark.parametrize(("value", "expected"), [("0", False), ("1", True)])
def test_the_override_skips_the_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv(OVERRIDE_ENV, value)
    probe = Probe(works=not expected)
    assert extra_buffers_allowed(AMX, MODEL, 0, tmp_path / "v.json", probe) is expected
    assert probe.calls == []


def test_the_frozen_app_does_not_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert not probe_in_child(embedded_model_path(), 0)


# ---- the real llama.cpp ---------------------------------------------------------------


@pytest.mark.slow
def test_the_probe_evaluates_a_token_of_the_embedded_model() -> None:
    assert probe_in_child(embedded_model_path(), 0)


def test_the_probe_fails_on_a_model_that_cannot_run(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + bytes(64))
    assert not probe_in_child(broken, 0)


def test_without_extra_buffers_changes_only_the_load_inside_it() -> None:
    import llama_cpp

    assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts
    with without_extra_buffers(llama_cpp):
        assert not llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts
    assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts


@pytest.mark.slow
def test_the_adapter_answers_without_extra_buffers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OVERRIDE_ENV, "0")
    llm = LlamaLanguageModel(n_ctx=512, sampling=SamplingConfig(max_tokens=12, seed=1))
    assert llm.extra_buffers is False
    reply = "".join(
        llm.stream([ChatMessage("user", "Say hello to me.")], cancelled=lambda: False)
    )
    assert reply.strip()
