"""``hanasu bench gpu --small``: the random Gemma 4 GGUF loads in llama.cpp and the report
has every figure the GPU run will be judged on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import gemma4_gguf


def test_real_shapes_are_gemma4_26b_a4b() -> None:
    s = gemma4_gguf.REAL
    full = [i for i in range(s.n_layer) if not s.is_swa(i)]
    assert full == [5, 11, 17, 23, 29]  # 25 sliding + 5 full, ending on full attention
    assert (s.n_expert, s.n_expert_used, s.n_vocab, s.sliding_window) == (128, 8, 262_144, 1024)
    # ~200 KiB of f16 KV per token with the sliding layers kept full size (K and V on
    # full layers here; the real model shares them there, ~10 KiB less)
    assert 200 * 1024 <= s.kv_bytes_per_token(True, 4096) <= 220 * 1024
    assert s.kv_bytes_per_token(False, 4096) < s.kv_bytes_per_token(True, 4096) / 2


def test_row_lengths_pick_a_4_bit_block_type() -> None:
    assert gemma4_gguf.quant_type(2816) == "Q4_K"
    assert gemma4_gguf.quant_type(704) == "Q4_0"
    assert gemma4_gguf.quant_type(1) == "F16"


@pytest.mark.slow
def test_bench_gpu_small_reports_ttft_decode_memory_and_swa(tmp_path: Path) -> None:
    report_path = tmp_path / "gpu.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "bench",
            "gpu",
            "--small",
            "--prefixes",
            "64,128",
            "--tokens",
            "8",
            "--cache",
            str(tmp_path),
            "--json",
            str(report_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(report_path.read_text())
    assert "say nothing about answer quality" in report["note"]
    assert report["shapes"]["name"] == gemma4_gguf.SMALL.name
    assert set(report["kv_cache_mib"]) == {"True", "False"}
    assert {run["swa_full"] for run in report["runs"]} == {True, False}
    for run in report["runs"]:
        assert run["load_s"] > 0 and run["rss_mib"] > 0
        assert set(run["prefixes"]) == {"64", "128"}
        for figures in run["prefixes"].values():
            cold, warm = figures["cold"], figures["warm"]
            assert cold["tokens"] == 8 and cold["ttft_s"] > 0
            assert cold["decode_tok_s"] > 0 and cold["tokens_per_chunk"] >= 1
            assert warm["ttft_s"] > 0 and isinstance(warm["prefix_reused"], bool)
    # written once under its final name, no partial file left behind
    assert [p.name for p in tmp_path.glob("*.gguf*")] == [f"{gemma4_gguf.SMALL.name}-v1.gguf"]
