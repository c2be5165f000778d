"""app.gpu reads nvidia-smi and never raises: a fake nvidia-smi on PATH plays each case."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app import gpu
from app.gpu import Gpu

MIB = 1024 * 1024


def _fake_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """An ``nvidia-smi`` shell script alone on PATH; it records its arguments in args.txt."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "nvidia-smi"
    script.write_text(f'#!/bin/sh\necho "$@" > "{tmp_path}/args.txt"\n{body}\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return tmp_path / "args.txt"


def test_two_gpus_with_total_free_and_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _fake_smi(
        tmp_path,
        monkeypatch,
        "printf 'NVIDIA GeForce RTX 4090, 24564, 20000, 4564\\n"
        "NVIDIA H200, 143771, [N/A], [N/A]\\n'",
    )
    assert gpu.nvidia_gpus() == [
        Gpu("NVIDIA GeForce RTX 4090", 24564 * MIB, 20000 * MIB, 4564 * MIB),
        Gpu("NVIDIA H200", 143771 * MIB, None, None),
    ]
    assert gpu.first_gpu() == Gpu("NVIDIA GeForce RTX 4090", 24564 * MIB, 20000 * MIB, 4564 * MIB)
    asked = args.read_text()
    assert "--query-gpu=name,memory.total,memory.free,memory.used" in asked
    assert "nounits" in asked


def test_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpu.nvidia_gpus() == []
    assert gpu.first_gpu() is None


@pytest.mark.parametrize(
    "body",
    [
        "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'",
        "echo 'garbage'; echo ', , ,'; echo 'GPU, lots, 1, 2'",
        "echo 'NVIDIA T4, 15360, 15000, 360'; exit 9",
        "printf '\\377\\376\\n'",
    ],
    ids=["driver-message", "garbage", "failed-exit", "not-utf8"],
)
def test_unreadable_output_means_no_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    _fake_smi(tmp_path, monkeypatch, body)
    assert gpu.nvidia_gpus() == []
    assert gpu.first_gpu() is None


def test_a_hung_nvidia_smi_is_given_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_smi(tmp_path, monkeypatch, "exec /bin/sleep 30")
    start = time.monotonic()
    assert gpu.first_gpu(timeout_s=0.5) is None
    assert time.monotonic() - start < 10


def test_app_gpu_is_the_only_caller_of_nvidia_smi() -> None:
    """One probe: the LLM loader, the model manager and the benches all ask app.gpu."""
    app_dir = Path(gpu.__file__).resolve().parent
    callers = [
        str(p.relative_to(app_dir))
        for p in app_dir.rglob("*.py")
        if p.name != "gpu.py" and '"nvidia-smi"' in p.read_text(encoding="utf-8")
    ]
    assert callers == []


def test_llm_loader_and_bench_read_the_same_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.adapters.llama_load import free_vram_bytes
    from bench.gpu import gpu_memory_mib
    from bench.latency import machine_name

    _fake_smi(tmp_path, monkeypatch, "echo 'NVIDIA L4, 23034, 22000, 1034'")
    assert free_vram_bytes() == 22000 * MIB
    assert gpu_memory_mib() == 1034
    assert ", NVIDIA L4, " in machine_name()
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert free_vram_bytes() is None
    assert gpu_memory_mib() is None
    assert ", no GPU, " in machine_name()


def test_driver_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = _fake_smi(tmp_path, monkeypatch, 'echo "550.54.14"\necho "550.54.14"')
    assert gpu.driver_version() == "550.54.14"
    assert "--query-gpu=driver_version" in args.read_text()


def test_driver_version_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_smi(tmp_path, monkeypatch, "exit 0")
    assert gpu.driver_version() is None
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert gpu.driver_version() is None
