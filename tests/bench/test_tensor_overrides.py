"""`-ot exps=CPU` through llama-cpp-python: the expert tensors, and only they, go to the CPU
buffer type (llama.cpp says so in its load log), and the binding is left as it was."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from app.paths import repo_root

SCRIPT = """
import sys
from pathlib import Path
import llama_cpp
from llama_cpp import _internals
from bench import gemma4_gguf
from bench.tensor_overrides import tensors_on_cpu

path = Path(sys.argv[1])
gemma4_gguf.write(path, gemma4_gguf.SMALL)
real = _internals.LlamaModel
with tensors_on_cpu() if sys.argv[2] == "on" else open(path):
    llm = llama_cpp.Llama(str(path), n_gpu_layers=-1, n_ctx=256, verbose=True)
assert _internals.LlamaModel is real
llm.eval([2, 300, 301])
print("evaluated", llm.n_tokens)
"""


def _load(tmp_path: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "small.gguf"), mode], cwd=repo_root(),
        capture_output=True, text=True, timeout=300, check=False)


def test_experts_and_only_experts_are_kept_on_the_cpu(tmp_path: Path) -> None:
    done = _load(tmp_path, "on")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "evaluated 3" in done.stdout
    moved = [line for line in done.stderr.splitlines() if "buffer type overridden to CPU" in line]
    assert moved and all("_exps." in line for line in moved), moved[:5]
    assert any("ffn_gate_up_exps" in line for line in moved)
    assert any("ffn_down_exps" in line for line in moved)


def test_without_it_nothing_is_overridden(tmp_path: Path) -> None:
    done = _load(tmp_path, "off")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "overridden" not in done.stderr


def test_bench_gpu_measures_the_experts_on_cpu_tier(tmp_path: Path) -> None:
    report = tmp_path / "gpu.json"
    done = subprocess.run(
        [sys.executable, "-m", "app", "bench", "gpu", "--small", "--prefixes", "64",
         "--tokens", "4", "--cache", str(tmp_path), "--experts-on-cpu", "--json", str(report)],
        cwd=repo_root(), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    runs = json.loads(report.read_text())["runs"]
    experts = [run for run in runs if run["layers_choice"] == "experts_cpu"]
    assert {run["swa_full"] for run in experts} == {True, False}
    assert all(run["experts_on_cpu"] for run in experts)
    assert not any(run["experts_on_cpu"] for run in runs if run not in experts)
    assert all(run["prefixes"]["64"]["cold"]["tokens"] == 4 for run in experts)
