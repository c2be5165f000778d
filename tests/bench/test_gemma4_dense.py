"""The dense Gemma 4 stand-ins (E2B, E4B): real shapes, Q4_K_M-like sizes, and files that
llama.cpp loads as Gemma 4 with per-layer embeddings and shared KV (checked on the scaled-down
variants of the same architecture)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.paths import repo_root
from bench import gemma4_gguf
from bench.gemma4_gguf import E2B, E2B_SMALL, E4B, E4B_SMALL, Gemma4Shapes
from bench.gguf_blocks import use_more_bits


def test_e2b_shapes() -> None:
    s = E2B
    assert (s.n_layer, s.n_embd, s.n_head, s.n_head_kv_swa, s.n_embd_per_layer) == (
        35, 1536, 8, 1, 256)
    assert [i for i in range(s.n_layer) if not s.is_swa(i)] == [4, 9, 14, 19, 24, 29, 34]
    assert [i for i in range(s.n_layer) if s.has_kv(i)] == list(range(15))
    assert [s.ff(i) for i in (0, 14, 15, 34)] == [6144, 6144, 12_288, 12_288]
    # 12 sliding layers of 1 x 256 and 3 full of 1 x 512 hold K and V: 18 KiB a token
    assert s.kv_bytes_per_token(True, 4096) == 18 * 1024


def test_e4b_shapes() -> None:
    s = E4B
    assert (s.n_layer, s.n_embd, s.n_head, s.n_head_kv_swa, s.n_embd_per_layer) == (
        42, 2560, 8, 2, 256)
    assert [i for i in range(s.n_layer) if not s.is_swa(i)] == list(range(5, 42, 6))
    assert sum(s.has_kv(i) for i in range(s.n_layer)) == 24
    assert {s.ff(i) for i in range(s.n_layer)} == {10_240}
    assert s.kv_bytes_per_token(True, 4096) == 56 * 1024


@pytest.mark.parametrize(("real", "small"), [(E2B, E2B_SMALL), (E4B, E4B_SMALL)])
def test_small_variants_keep_the_structure(real: Gemma4Shapes, small: Gemma4Shapes) -> None:
    for s in (real, small):
        last = s.n_layer - s.n_kv_shared - 1
        # llama.cpp's shared layers read the last KV layer (full attention) or the one
        # before it (sliding): a shape without that order does not load
        assert not s.is_swa(last) and s.is_swa(last - 1)
    assert (small.swa_period, small.double_wide_mlp, small.tied_output) == (
        real.swa_period, real.double_wide_mlp, real.tied_output)


def test_tensors_follow_the_architecture_and_q4_k_m() -> None:
    kinds = {name: kind for name, _shape, kind in gemma4_gguf.tensors(E2B)}
    assert "output.weight" not in kinds  # tied to the embedding
    assert kinds["token_embd.weight"] == kinds["per_layer_token_embd.weight"] == "Q6_K"
    assert "blk.14.attn_k.weight" in kinds and "blk.15.attn_k.weight" not in kinds
    assert "blk.15.attn_v.weight" not in kinds and "blk.15.attn_q.weight" in kinds
    assert all(f"blk.{i}.inp_gate.weight" in kinds for i in range(35))
    assert not any("exps" in name for name in kinds)
    downs = [kinds[f"blk.{i}.ffn_down.weight"] for i in range(35)]
    # llama.cpp's "more bits" rule for 35 layers: the first 4, the last 5, every third between
    more = [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 31, 32, 33, 34]
    assert [i for i in range(35) if use_more_bits(i, 35)] == more
    assert [i for i, kind in enumerate(downs) if kind == "Q6_K"] == more
    assert {kinds[f"blk.{i}.ffn_up.weight"] for i in range(35)} == {"Q4_K"}


def test_sizes_match_the_published_q4_k_m_files() -> None:
    # ggml-org's gemma-4-E2B-it Q4_K_M is 3.35 GB; the manifest expects about 5.3 GB for E4B
    assert 3.25e9 < gemma4_gguf.weights_bytes(E2B) < 3.45e9
    assert 5.0e9 < gemma4_gguf.weights_bytes(E4B) < 5.5e9


LOAD = """
import sys
import llama_cpp
from pathlib import Path
from bench import gemma4_gguf

shapes = getattr(gemma4_gguf, sys.argv[2])
path = gemma4_gguf.write(Path(sys.argv[1]), shapes)
llm = llama_cpp.Llama(str(path), n_ctx=512, swa_full=True, verbose=True)
print("arch", llm.metadata["general.architecture"], "layers", llm.metadata["gemma4.block_count"])
out = []
for token in llm.generate([2] + list(range(300, 364)), temp=0.7):
    out.append(token)
    if len(out) == 8:
        break
assert all(0 <= t < llm.n_vocab() for t in out), out
print("generated", len(out), "size", path.stat().st_size)
"""


@pytest.mark.parametrize("name", ["E2B_SMALL", "E4B_SMALL"])
def test_llama_cpp_loads_and_runs_the_dense_shapes(tmp_path: Path, name: str) -> None:
    shapes: Gemma4Shapes = getattr(gemma4_gguf, name)
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(tmp_path / "m.gguf"), name], cwd=repo_root(),
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"arch gemma4 layers {shapes.n_layer}" in done.stdout
    assert "generated 8" in done.stdout
    size = int(done.stdout.split("size")[-1])
    assert gemma4_gguf.weights_bytes(shapes) < size < gemma4_gguf.weights_bytes(shapes) + 2**20
    log = done.stderr
    # the loader saw the shared-KV layers and the per-layer embeddings
    no_kv = {int(m) for m in re.findall(r"layer +(\d+): does not have KV cache", log)}
    assert no_kv == set(range(shapes.n_layer - shapes.n_kv_shared, shapes.n_layer))
    assert "per_layer_token_embd.weight" in log and "- type q6_K:" in log
    assert "wrong number of tensors" not in log
