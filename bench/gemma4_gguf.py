"""A random-weight GGUF with the Gemma 4 26B-A4B architecture, for ``hanasu bench gpu``.

No download and no real weights: the file has the production model's shapes (30 layers,
25 sliding-window + 5 full-attention in a 5:1 pattern ending on full attention, hidden
2816, 16 query heads, 8 KV heads of 256 on sliding layers and 2 of 512 on full ones, a
1,024-token window, 128 experts of 704 with 8 used beside a 2,112 dense MLP, a 262,144
token vocabulary) and roughly its Q4_K_M size, so llama.cpp does the same work per token.
Quantized blocks are random bytes with a fixed, small scale: the speed is honest, the
text is noise. Two simplifications: full-attention layers keep a separate V projection
(the real model shares K and V there), and the output matrix is not tied to the
embedding. ``SMALL`` has the same structure scaled down, for CPU and CI.

Tensors are streamed to disk one at a time, so writing the 16 GB file needs little memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<|turn>' + role + '\n' + message['content'] | trim + '<turn|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|turn>model\n<|channel>thought\n<channel|>' }}{% endif %}"
)
"""Gemma 4's chat format (system turn, "model" role, closed empty thought block)."""
LEADING = ("<pad>", "<eos>", "<bos>", "<unk>", "<|turn>", "<turn|>", "<|channel>", "<channel|>")
BOS, EOS, TURN_END = 2, 1, 5


@dataclass(frozen=True)
class Gemma4Shapes:
    """Sizes of one Gemma 4 MoE model."""

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
    n_expert: int
    n_expert_used: int
    n_ff_exp: int
    sliding_window: int
    n_vocab: int
    context_length: int

    def is_swa(self, layer: int) -> bool:
        return (layer + 1) % self.swa_period != 0 and layer != self.n_layer - 1

    def kv_bytes_per_token(self, swa_full: bool, n_ctx: int) -> float:
        """f16 K+V bytes per context token, sliding layers counted at their window
        unless ``swa_full`` keeps them full size."""
        total = 0.0
        for layer in range(self.n_layer):
            if self.is_swa(layer):
                share = 1.0 if swa_full else min(1.0, self.sliding_window / n_ctx)
                total += share * 2 * 2 * self.n_head_kv_swa * self.head_dim_swa
            else:
                total += 2 * 2 * self.n_head_kv_full * self.head_dim_full
        return total


REAL = Gemma4Shapes(
    name="gemma4-26b-a4b-random",
    n_layer=30,
    swa_period=6,
    n_embd=2816,
    n_head=16,
    n_head_kv_swa=8,
    n_head_kv_full=2,
    head_dim_swa=256,
    head_dim_full=512,
    n_ff=2112,
    n_expert=128,
    n_expert_used=8,
    n_ff_exp=704,
    sliding_window=1024,
    n_vocab=262_144,
    context_length=262_144,
)
SMALL = Gemma4Shapes(
    name="gemma4-small-random",
    n_layer=6,
    swa_period=6,
    n_embd=256,
    n_head=4,
    n_head_kv_swa=2,
    n_head_kv_full=1,
    head_dim_swa=64,
    head_dim_full=128,
    n_ff=256,
    n_expert=16,
    n_expert_used=4,
    n_ff_exp=64,
    sliding_window=128,
    n_vocab=8_192,
    context_length=8_192,
)


def filler_token(index: int) -> str:
    """The text of ordinary vocabulary entry ``index``: a word, so prompts can be made
    of a known number of tokens ("w17 w18 ...")."""
    return f"\u2581w{index}"


def _tensors(s: Gemma4Shapes) -> Iterator[tuple[str, tuple[int, ...], str]]:
    """(name, numpy shape, kind) of every tensor; kind 'norm' is f32, 'w' quantized."""
    yield "token_embd.weight", (s.n_vocab, s.n_embd), "w"
    yield "output_norm.weight", (s.n_embd,), "norm"
    yield "output.weight", (s.n_vocab, s.n_embd), "w"
    yield "rope_freqs.weight", (s.head_dim_full // 2,), "norm"
    for i in range(s.n_layer):
        p = f"blk.{i}"
        swa = s.is_swa(i)
        hd = s.head_dim_swa if swa else s.head_dim_full
        kv = s.n_head_kv_swa if swa else s.n_head_kv_full
        yield f"{p}.attn_norm.weight", (s.n_embd,), "norm"
        yield f"{p}.attn_q.weight", (s.n_head * hd, s.n_embd), "w"
        yield f"{p}.attn_k.weight", (kv * hd, s.n_embd), "w"
        yield f"{p}.attn_v.weight", (kv * hd, s.n_embd), "w"
        yield f"{p}.attn_q_norm.weight", (hd,), "norm"
        yield f"{p}.attn_k_norm.weight", (hd,), "norm"
        yield f"{p}.attn_output.weight", (s.n_embd, s.n_head * hd), "w"
        yield f"{p}.post_attention_norm.weight", (s.n_embd,), "norm"
        yield f"{p}.ffn_norm.weight", (s.n_embd,), "norm"
        yield f"{p}.ffn_gate.weight", (s.n_ff, s.n_embd), "w"
        yield f"{p}.ffn_up.weight", (s.n_ff, s.n_embd), "w"
        yield f"{p}.ffn_down.weight", (s.n_embd, s.n_ff), "w"
        yield f"{p}.post_ffw_norm_1.weight", (s.n_embd,), "norm"
        yield f"{p}.pre_ffw_norm_2.weight", (s.n_embd,), "norm"
        yield f"{p}.ffn_gate_inp.weight", (s.n_expert, s.n_embd), "router"
        yield f"{p}.ffn_gate_inp.scale", (s.n_embd,), "norm"
        yield f"{p}.ffn_gate_up_exps.weight", (s.n_expert, 2 * s.n_ff_exp, s.n_embd), "w"
        yield f"{p}.ffn_down_exps.weight", (s.n_expert, s.n_embd, s.n_ff_exp), "w"
        yield f"{p}.ffn_down_exps.scale", (s.n_expert,), "norm"
        yield f"{p}.post_ffw_norm_2.weight", (s.n_embd,), "norm"
        yield f"{p}.post_ffw_norm.weight", (s.n_embd,), "norm"
        yield f"{p}.layer_output_scale.weight", (1,), "norm"


def quant_type(row: int) -> str:
    """Q4_K (the bulk of a Q4_K_M file) where a row holds whole 256-blocks, else Q4_0
    (32-blocks, about the same bits per weight), else f16."""
    if row % 256 == 0:
        return "Q4_K"
    return "Q4_0" if row % 32 == 0 else "F16"


def _payload(shape: tuple[int, ...], kind: str, rng: np.random.Generator) -> np.ndarray:
    """Random weights for one tensor: raw quantized blocks with a small fixed scale."""
    import gguf

    if kind == "norm":
        return np.ones(shape, np.float32)
    if kind == "router":
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)
    qtype = quant_type(shape[-1])
    if qtype == "F16":
        return (rng.standard_normal(shape) * 0.02).astype(np.float16)
    block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[qtype]]
    rows = int(np.prod(shape[:-1]))
    blocks = rng.integers(0, 256, size=(rows * shape[-1] // block, size), dtype=np.uint8)
    scales = np.array([2e-4, 1e-4] if qtype == "Q4_K" else [1e-2], np.float16).view(np.uint8)
    blocks[:, : scales.size] = scales  # d (and dmin): keeps activations small and finite
    return blocks.reshape(*shape[:-1], shape[-1] // block * size)


def write(path: Path, shapes: Gemma4Shapes, seed: int = 0) -> Path:
    """Write the random-weight model to ``path`` (via a temporary name, then renamed)."""
    import gguf

    s = shapes
    part = path.with_name(path.name + ".part")
    arch = gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.GEMMA4]
    w = gguf.GGUFWriter(str(part), arch)
    w.add_name(s.name)
    w.add_description(f"random weights, shapes {asdict(s)}: speed only, no meaning")
    w.add_context_length(s.context_length)
    w.add_embedding_length(s.n_embd)
    w.add_block_count(s.n_layer)
    w.add_feed_forward_length(s.n_ff)
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
    w.add_shared_kv_layers(0)
    w.add_embedding_length_per_layer_input(0)
    w.add_expert_count(s.n_expert)
    w.add_expert_used_count(s.n_expert_used)
    w.add_expert_feed_forward_length(s.n_ff_exp)
    w.add_final_logit_softcapping(30.0)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    _add_vocab(w, s.n_vocab)
    w.add_chat_template(TEMPLATE)

    rng = np.random.default_rng(seed)
    cache: dict[tuple[tuple[int, ...], str], np.ndarray] = {}
    specs = list(_tensors(s))
    for name, shape, kind in specs:
        payload = _payload_cached(cache, shape, kind, rng)
        quantized = kind not in ("norm", "router")
        qtype = gguf.GGMLQuantizationType[quant_type(shape[-1])] if quantized else None
        w.add_tensor_info(name, payload.shape, payload.dtype, payload.nbytes, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for _name, shape, kind in specs:
        w.write_tensor_data(_payload_cached(cache, shape, kind, rng))
    w.close()
    part.replace(path)
    return path


def _payload_cached(
    cache: dict[tuple[tuple[int, ...], str], np.ndarray],
    shape: tuple[int, ...],
    kind: str,
    rng: np.random.Generator,
) -> np.ndarray:
    """Layers of one shape share their random bytes: content does not change speed, and
    generating 16 GB of random numbers would take longer than the benchmark."""
    key = (shape, kind)
    if key not in cache:
        cache[key] = _payload(shape, kind, rng)
    return cache[key]


def _add_vocab(w: Any, n_vocab: int) -> None:
    import gguf

    control = gguf.TokenType.CONTROL
    tokens = list(LEADING)
    types = [control, control, control, gguf.TokenType.UNKNOWN, control, control]
    types += [gguf.TokenType.USER_DEFINED] * 2
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(gguf.TokenType.BYTE)
    start = len(tokens)
    tokens += [filler_token(i) for i in range(n_vocab - start)]
    types += [gguf.TokenType.NORMAL] * (n_vocab - start)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * n_vocab)
    w.add_token_types(types)
    w.add_unk_token_id(3)
    w.add_bos_token_id(BOS)
    w.add_eos_token_id(EOS)
    w.add_eot_token_id(TURN_END)
    w.add_pad_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_space_prefix(False)
