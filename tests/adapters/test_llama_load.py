"""The GPU-layer choice made before llama.cpp loads a model: everything on the GPU when the
file fits free VRAM, the share of layers that fits when it does not, none on a CPU build."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.adapters import llama_load
from app.adapters.errors import EngineLoadError
from app.adapters.llama_load import VRAM_RESERVE_BYTES, auto_gpu_layers, check_gguf

GB = 1_000_000_000


def fake_llama_cpp(gpu: bool, blocks: int = 40) -> Any:
    class Probe:
        def __init__(self, path: str, vocab_only: bool, verbose: bool) -> None:
            assert vocab_only  # only the metadata is read, never the weights
            self.metadata = {"general.architecture": "gemma4", "gemma4.block_count": str(blocks)}

        def close(self) -> None:
            pass

    return SimpleNamespace(llama_supports_gpu_offload=lambda: gpu, Llama=Probe)


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "m.gguf"
    with path.open("wb") as f:
        f.write(b"GGUF")
        f.truncate(4 * GB)  # sparse: its size is what counts
    return path


def test_a_cpu_build_offloads_nothing(model_file: Path) -> None:
    assert auto_gpu_layers(fake_llama_cpp(gpu=False), model_file) == 0


@pytest.mark.parametrize("free", [None, 6 * GB])
def test_all_layers_when_the_file_fits_or_vram_is_unknown(
    model_file: Path, monkeypatch: pytest.MonkeyPatch, free: int | None
) -> None:
    monkeypatch.setattr(llama_load, "free_vram_bytes", lambda: free)
    assert auto_gpu_layers(fake_llama_cpp(gpu=True), model_file) == -1


def test_the_share_of_layers_that_fits(model_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_load, "free_vram_bytes", lambda: 2 * GB + VRAM_RESERVE_BYTES)
    assert auto_gpu_layers(fake_llama_cpp(gpu=True, blocks=40), model_file) == 20


def test_a_file_that_is_not_gguf_is_named(tmp_path: Path) -> None:
    path = tmp_path / "weights.bin"
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(EngineLoadError, match=r"weights\.bin is not a GGUF file"):
        check_gguf(path)
