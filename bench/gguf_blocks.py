"""Random weights and a synthetic vocabulary for benchmark GGUFs (``gemma4_gguf``).

A tensor is described by its numpy shape and a kind: ``norm`` (f32 ones), ``router`` (small
random f32) or a ggml type name (``Q4_K``, ``Q6_K``, ``Q4_0``, ``F16``). Quantized blocks are
random bytes with a small fixed scale written where the format keeps it: llama.cpp does the
same arithmetic whatever the bytes are, so speed is honest and activations stay finite.
"""

from __future__ import annotations

from typing import Any

import numpy as np

LEADING = ("<pad>", "<eos>", "<bos>", "<unk>", "<|turn>", "<turn|>", "<|channel>", "<channel|>")
BOS, EOS, TURN_END = 2, 1, 5

_SCALES: dict[str, tuple[int, list[float]]] = {
    # type: (byte offset of the f16 scale(s) in a block, their values)
    "Q4_0": (0, [1e-2]),  # d, then 16 bytes of 4-bit values
    "Q4_K": (0, [2e-4, 1e-4]),  # d, dmin, then 6-bit sub-scales and 4-bit values
    "Q6_K": (208, [5e-5]),  # 4+2-bit values, int8 sub-scales, then d last
}


def quant_type(row: int) -> str:
    """Q4_K (the bulk of a Q4_K_M file) where a row holds whole 256-blocks, else Q4_0
    (32-blocks, about the same bits per weight), else f16."""
    if row % 256 == 0:
        return "Q4_K"
    return "Q4_0" if row % 32 == 0 else "F16"


def more_bits_type(row: int) -> str:
    """Q6_K, as Q4_K_M stores its embeddings and some V and down projections, where the
    row allows it; else what ``quant_type`` picks."""
    return "Q6_K" if row % 256 == 0 else quant_type(row)


def use_more_bits(index: int, count: int) -> bool:
    """Whether Q4_K_M gives the ``index``-th of ``count`` such tensors more bits: the first
    and last eighth, and every third one between (llama.cpp's quantization rule)."""
    return index < count // 8 or index >= 7 * count // 8 or (index - count // 8) % 3 == 2


def is_quantized(kind: str) -> bool:
    return kind not in ("norm", "router", "F16")


def payload(shape: tuple[int, ...], kind: str, rng: np.random.Generator) -> np.ndarray:
    """Random weights for one tensor (raw blocks for a quantized kind)."""
    import gguf

    if kind == "norm":
        return np.ones(shape, np.float32)
    if kind == "router":
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)
    if kind == "F16":
        return (rng.standard_normal(shape) * 0.02).astype(np.float16)
    block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[kind]]
    if shape[-1] % block:
        raise ValueError(f"{kind} needs rows of whole {block}-blocks, not {shape[-1]}")
    rows = int(np.prod(shape[:-1]))
    blocks = rng.integers(0, 256, size=(rows * shape[-1] // block, size), dtype=np.uint8)
    offset, values = _SCALES[kind]
    scales = np.array(values, np.float16).view(np.uint8)
    blocks[:, offset : offset + scales.size] = scales
    return blocks.reshape(*shape[:-1], shape[-1] // block * size)


class PayloadCache:
    """Tensors of one shape and kind share their random bytes: content does not change
    speed, and drawing gigabytes of random numbers would take longer than the benchmark."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)
        self._cache: dict[tuple[tuple[int, ...], str], np.ndarray] = {}

    def get(self, shape: tuple[int, ...], kind: str) -> np.ndarray:
        key = (shape, kind)
        if key not in self._cache:
            self._cache[key] = payload(shape, kind, self._rng)
        return self._cache[key]


def filler_token(index: int) -> str:
    """The text of ordinary vocabulary entry ``index``: a word, so prompts can be made
    of a known number of tokens ("w17 w18 ...")."""
    return f"\u2581w{index}"


def add_vocab(w: Any, n_vocab: int) -> None:
    """Gemma-like special tokens, 256 byte tokens, then filler words up to ``n_vocab``."""
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
