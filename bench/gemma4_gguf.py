"""Random-weight GGUFs with real Gemma 4 architectures, for ``hanasu bench gpu`` and ``tiers``.

No download and no real weights: each file has a production model's shapes and roughly its
Q4_K_M size, so llama.cpp does the same work per token; the text is noise (``gguf_blocks``).

- ``REAL``: Gemma 4 26B-A4B (MoE). 30 layers, 25 sliding-window + 5 full-attention in a 5:1
  pattern ending on full attention, hidden 2816, 16 query heads, 8 KV heads of 256 on sliding
  layers and 2 of 512 on full ones, a 1,024-token window, 128 experts of 704 with 8 used beside
  a 2,112 dense MLP, a 262,144-token vocabulary. Two simplifications: full-attention layers
  keep a separate V projection (the real model shares K and V there), and the output matrix
  is not tied to the embedding; every matrix is Q4_K (or Q4_0 where rows are short).
- ``E2B`` and ``E4B``: the dense Gemma 4 models with per-layer embeddings (PLE: a 256-wide
  embedding per layer and token, gated into each layer's output) and shared KV (the last 20 of
  35 / 18 of 42 layers compute only Q and attend to the cache of the last earlier layer of the
  same kind, so they have no K/V tensors). E2B: hidden 1536, 8 heads, 1 KV head, MLP 6144
  (12,288 on the shared layers, "double-wide"), sliding/full 4:1. E4B: hidden 2560, 8 heads,
  2 KV heads, MLP 10,240, 5:1. Both: heads of 256 (sliding) / 512 (full), a 512-token window,
  output tied to the embedding. Quantized as Q4_K_M does: embeddings (token and per-layer) Q6_K,
  V and down projections Q6_K on llama.cpp's "more bits" layers, the rest Q4_K (E2B: 3.3 GB,
  as the published file). From the models' config.json and llama.cpp's gemma4 loader.
- ``SMALL``, ``E2B_SMALL``, ``E4B_SMALL``: the same structures scaled down, for tests and CI.

Tensors are streamed to disk one at a time, so writing a 16 GB file needs little memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.gguf_blocks import (
    BOS,
    EOS,
    LEADING,
    TURN_END,
    PayloadCache,
    add_vocab,
    filler_token,
    is_quantized,
    more_bits_type,
    quant_type,
    use_more_bits,
)

__all__ = ["BOS", "EOS", "LEADING", "TURN_END", "filler_token", "quant_type"]

TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<|turn>' + role + '\n' + message['content'] | trim + '<turn|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|turn>model\n<|channel>thought\n<channel|>' }}{% endif %}"
)
"""Gemma 4's chat format (system turn, "model" role, closed empty thought block)."""
VERSION = 1
"""Part of the cached file's name: bump it when the bytes a shape writes change."""


@dataclass(frozen=True)
class Gemma4Shapes:
    """Sizes of one Gemma 4 model: MoE (``n_expert`` > 0) or dense with per-layer
    embeddings and shared KV."""

    name: str
    n_layer: int
    swa_period: int
    """Every ``swa_period``-th layer (and the last) is full attention."""
    n_embd: int
    n_head: int
    n_head_kv_swa: int
    n_head_kv_full: int
    head_dim_swa: int
    head_dim_full: int
    n_ff: int
    sliding_window: int
    n_vocab: int
    context_length: int
    n_expert: int = 0
    n_expert_used: int = 0
    n_ff_exp: int = 0
    n_embd_per_layer: int = 0
    """Width of the per-layer embeddings (0: none)."""
    n_kv_shared: int = 0
    """The last layers that reuse an earlier layer's KV cache."""
    double_wide_mlp: bool = False
    """The shared-KV layers' MLP is twice ``n_ff``."""
    tied_output: bool = False
    q4_k_m_mix: bool = False
    """Q6_K where Q4_K_M puts it (embeddings, some V/down projections); else all Q4_K."""

    def is_swa(self, layer: int) -> bool:
        return (layer + 1) % self.swa_period != 0 and layer != self.n_layer - 1

    def has_kv(self, layer: int) -> bool:
        return layer < self.n_layer - self.n_kv_shared

    def ff(self, layer: int) -> int:
        return self.n_ff * (2 if self.double_wide_mlp and not self.has_kv(layer) else 1)

    def kv_bytes_per_token(self, swa_full: bool, n_ctx: int) -> float:
        """f16 K+V bytes per context token, sliding layers counted at their window
        unless ``swa_full`` keeps them full size; shared-KV layers add nothing."""
        total = 0.0
        for layer in range(self.n_layer):
            if not self.has_kv(layer):
                continue
            if self.is_swa(layer):
                share = 1.0 if swa_full else min(1.0, self.sliding_window / n_ctx)
                total += share * 2 * 2 * self.n_head_kv_swa * self.head_dim_swa
            else:
                total += 2 * 2 * self.n_head_kv_full * self.head_dim_full
        return total


# positional: name, n_layer, swa_period, n_embd, n_head, n_head_kv_swa, n_head_kv_full,
# head_dim_swa, head_dim_full, n_ff, sliding_window, n_vocab, context_length
REAL = Gemma4Shapes("gemma4-26b-a4b-random", 30, 6, 2816, 16, 8, 2, 256, 512, 2112, 1024,
                    262_144, 262_144, n_expert=128, n_expert_used=8, n_ff_exp=704)
SMALL = Gemma4Shapes("gemma4-small-random", 6, 6, 256, 4, 2, 1, 64, 128, 256, 128, 8_192, 8_192,
                     n_expert=16, n_expert_used=4, n_ff_exp=64)
E2B = Gemma4Shapes("gemma4-e2b-random", 35, 5, 1536, 8, 1, 1, 256, 512, 6144, 512, 262_144,
                   131_072, n_embd_per_layer=256, n_kv_shared=20, double_wide_mlp=True,
                   tied_output=True, q4_k_m_mix=True)
E4B = Gemma4Shapes("gemma4-e4b-random", 42, 6, 2560, 8, 2, 2, 256, 512, 10_240, 512, 262_144,
                   131_072, n_embd_per_layer=256, n_kv_shared=18, tied_output=True,
                   q4_k_m_mix=True)
E2B_SMALL = Gemma4Shapes("gemma4-e2b-small-random", 10, 5, 256, 4, 1, 1, 64, 128, 512, 128,
                         8_192, 8_192, n_embd_per_layer=32, n_kv_shared=5,
                         double_wide_mlp=True, tied_output=True, q4_k_m_mix=True)
E4B_SMALL = Gemma4Shapes("gemma4-e4b-small-random", 12, 6, 256, 4, 2, 2, 64, 128, 512, 128,
                         8_192, 8_192, n_embd_per_layer=32, n_kv_shared=6, tied_output=True,
                         q4_k_m_mix=True)


def tensors(s: Gemma4Shapes) -> Iterator[tuple[str, tuple[int, ...], str]]:
    """(name, numpy shape, kind) of every tensor; numpy shapes are ggml's reversed."""
    q = quant_type
    embd_kind = more_bits_type(s.n_embd) if s.q4_k_m_mix else q(s.n_embd)
    yield "token_embd.weight", (s.n_vocab, s.n_embd), embd_kind
    yield "output_norm.weight", (s.n_embd,), "norm"
    if not s.tied_output:
        yield "output.weight", (s.n_vocab, s.n_embd), q(s.n_embd)
    yield "rope_freqs.weight", (s.head_dim_full // 2,), "norm"
    ple = s.n_embd_per_layer * s.n_layer
    if ple:
        yield "per_layer_token_embd.weight", (s.n_vocab, ple), more_bits_type(ple)
        yield "per_layer_model_proj.weight", (ple, s.n_embd), q(s.n_embd)
        yield "per_layer_proj_norm.weight", (s.n_embd_per_layer,), "norm"
    kv_layers = sum(s.has_kv(i) for i in range(s.n_layer))
    for i in range(s.n_layer):
        p = f"blk.{i}"
        hd = s.head_dim_swa if s.is_swa(i) else s.head_dim_full
        kv = s.n_head_kv_swa if s.is_swa(i) else s.n_head_kv_full
        ff = s.ff(i)
        yield f"{p}.attn_norm.weight", (s.n_embd,), "norm"
        yield f"{p}.attn_q.weight", (s.n_head * hd, s.n_embd), q(s.n_embd)
        if s.has_kv(i):
            v_kind = more_bits_type(s.n_embd) if s.q4_k_m_mix and use_more_bits(
                i, kv_layers) else q(s.n_embd)
            yield f"{p}.attn_k.weight", (kv * hd, s.n_embd), q(s.n_embd)
            yield f"{p}.attn_v.weight", (kv * hd, s.n_embd), v_kind
        yield f"{p}.attn_q_norm.weight", (hd,), "norm"
        if s.has_kv(i):
            yield f"{p}.attn_k_norm.weight", (hd,), "norm"
        yield f"{p}.attn_output.weight", (s.n_embd, s.n_head * hd), q(s.n_head * hd)
        yield f"{p}.post_attention_norm.weight", (s.n_embd,), "norm"
        yield f"{p}.ffn_norm.weight", (s.n_embd,), "norm"
        yield f"{p}.ffn_gate.weight", (ff, s.n_embd), q(s.n_embd)
        yield f"{p}.ffn_up.weight", (ff, s.n_embd), q(s.n_embd)
        down = more_bits_type(ff) if s.q4_k_m_mix and use_more_bits(i, s.n_layer) else q(ff)
        yield f"{p}.ffn_down.weight", (s.n_embd, ff), down
        if s.n_expert:
            yield from _expert_tensors(s, p)
        yield f"{p}.post_ffw_norm.weight", (s.n_embd,), "norm"
        yield f"{p}.layer_output_scale.weight", (1,), "norm"
        if s.n_embd_per_layer:
            pl = s.n_embd_per_layer
            yield f"{p}.inp_gate.weight", (pl, s.n_embd), q(s.n_embd)
            yield f"{p}.proj.weight", (s.n_embd, pl), q(pl)
            yield f"{p}.post_norm.weight", (s.n_embd,), "norm"


def weights_bytes(s: Gemma4Shapes) -> int:
    """Bytes of tensor data ``write`` puts in the file (the header adds a few MB)."""
    import gguf

    total = 0
    for _name, shape, kind in tensors(s):
        count = 1
        for n in shape:
            count *= n
        if kind in ("norm", "router"):
            total += 4 * count
        else:
            block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[kind]]
            total += count // block * size
    return total


def _expert_tensors(s: Gemma4Shapes, p: str) -> Iterator[tuple[str, tuple[int, ...], str]]:
    yield f"{p}.post_ffw_norm_1.weight", (s.n_embd,), "norm"
    yield f"{p}.pre_ffw_norm_2.weight", (s.n_embd,), "norm"
    yield f"{p}.ffn_gate_inp.weight", (s.n_expert, s.n_embd), "router"
    yield f"{p}.ffn_gate_inp.scale", (s.n_embd,), "norm"
    gate_up = (s.n_expert, 2 * s.n_ff_exp, s.n_embd)
    yield f"{p}.ffn_gate_up_exps.weight", gate_up, quant_type(s.n_embd)
    down = (s.n_expert, s.n_embd, s.n_ff_exp)
    yield f"{p}.ffn_down_exps.weight", down, quant_type(s.n_ff_exp)
    yield f"{p}.ffn_down_exps.scale", (s.n_expert,), "norm"
    yield f"{p}.post_ffw_norm_2.weight", (s.n_embd,), "norm"


def _add_hparams(w: Any, s: Gemma4Shapes) -> None:
    import gguf

    w.add_name(s.name)
    w.add_description(f"random weights, shapes {asdict(s)}: speed only, no meaning")
    w.add_context_length(s.context_length)
    w.add_embedding_length(s.n_embd)
    w.add_block_count(s.n_layer)
    ffs = [s.ff(i) for i in range(s.n_layer)]
    w.add_feed_forward_length(ffs if len(set(ffs)) > 1 else s.n_ff)
    w.add_head_count(s.n_head)
    w.add_head_count_kv(
        [s.n_head_kv_swa if s.is_swa(i) else s.n_head_kv_full for i in range(s.n_layer)]
    )
    w.add_key_length(s.head_dim_full)
    w.add_value_length(s.head_dim_full)
    w.add_key_length_swa(s.head_dim_swa)
    w.add_value_length_swa(s.head_dim_swa)
    w.add_rope_dimension_count(s.head_dim_full)
    w.add_rope_dimension_count_swa(s.head_dim_swa)
    w.add_rope_freq_base(1_000_000.0)
    w.add_rope_freq_base_swa(10_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_sliding_window(s.sliding_window)
    w.add_sliding_window_pattern([s.is_swa(i) for i in range(s.n_layer)])
    w.add_shared_kv_layers(s.n_kv_shared)
    w.add_embedding_length_per_layer_input(s.n_embd_per_layer)
    if s.n_expert:
        w.add_expert_count(s.n_expert)
        w.add_expert_used_count(s.n_expert_used)
        w.add_expert_feed_forward_length(s.n_ff_exp)
    w.add_final_logit_softcapping(30.0)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    add_vocab(w, s.n_vocab)
    w.add_chat_template(TEMPLATE)


def write(path: Path, shapes: Gemma4Shapes, seed: int = 0) -> Path:
    """Write the random-weight model to ``path`` (via a temporary name, then renamed)."""
    import gguf

    part = path.with_name(path.name + ".part")
    w = gguf.GGUFWriter(str(part), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.GEMMA4])
    _add_hparams(w, shapes)
    payloads = PayloadCache(seed)
    specs = list(tensors(shapes))
    for name, shape, kind in specs:
        data = payloads.get(shape, kind)
        qtype = gguf.GGMLQuantizationType[kind] if is_quantized(kind) else None
        w.add_tensor_info(name, data.shape, data.dtype, data.nbytes, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for _name, shape, kind in specs:
        w.write_tensor_data(payloads.get(shape, kind))
    w.close()
    part.replace(path)
    return path


def cached(shapes: Gemma4Shapes, folder: Path) -> Path:
    """The random model for ``shapes`` in ``folder``, written on first use only."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{shapes.name}-v{VERSION}.gguf"
    if not path.is_file():
        print(f"writing {path} (random weights) ...", flush=True)
        write(path, shapes)
    return path
