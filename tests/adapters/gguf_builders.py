"""Tiny GGUF language models for tests, written with the ``gguf`` package.

The weights are built, not trained, so the reply is known: every layer's output
projections are zero (the residual stream is just the token embedding), embeddings are
random unit vectors, and each output row points at the embedding of the token that
should come before it. The model is then a deterministic bigram machine: after the
chat template's generation prompt it says exactly the scripted reply, then the
end-of-turn token. That exercises template rendering, tokenization, streaming, stop
handling and KV-cache reuse with a file of a few hundred KB.

Two architectures: ``llama`` (ChatML template) and ``gemma4`` (the Gemma 4 code path of
the LLM adapter: sliding-window + full attention layers with different head sizes, a
mixture-of-experts block beside the dense MLP in every layer, and a Gemma 4-format
chat template with its special tokens). Both use a byte-fallback SentencePiece ("llama")
vocabulary; the real Gemma 4 tokenizer model ("gemma4") needs the real vocabulary.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Modelled on Gemma 4's chat format: a real system turn, "model" for the assistant, and
# (thinking off unless enable_thinking) an empty, closed thought block after the
# generation prompt, as the 26B-A4B template writes it.
GEMMA4_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<|turn>' + role + '\n' + message['content'] | trim + '<turn|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}"
    "{{ '<|turn>model\n' }}"
    "{% if not enable_thinking | default(false) %}{{ '<|channel>thought\n<channel|>' }}{% endif %}"
    "{% endif %}"
)
GEMMA4_LEADING = ("<pad>", "<eos>", "<bos>", "<unk>")  # ids 0-3, as in Gemma's vocabulary
GEMMA4_SPECIALS = ("<|turn>", "<turn|>", "<|think|>", "<end_of_turn>")
GEMMA4_CONTROLS = ("<mask>", "<|tool>", "<tool|>", "<|tool_call>", "<tool_call|>",
                   "<|tool_response>", "<tool_response|>", '<|"|>', "<|image>", "<|audio>",
                   "<|image|>", "<|audio|>", "<image|>", "<audio|>", "<|video|>")
"""The rest of Gemma 4's control tokens, as its vocabulary (llama.cpp's ggml-vocab-gemma-4)
lists them: text holding one must not reach the model as that token."""
# Gemma 4's converter marks these USER_DEFINED (always rendered as text, for chat parsers).
GEMMA4_VISIBLE = ("<|channel>", "<channel|>")
GEMMA4_REPLY = ("\u2581Hi", "\u2581there", "!")

N_EMBD = 64
N_HEAD = 4
N_FF = 128
N_LAYER = 2


@dataclass
class _Vocab:
    tokens: list[str]
    types: list[int]

    @property
    def index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}


def _vocab(leading: Sequence[tuple[str, int]], reply_tokens: Sequence[str]) -> _Vocab:
    """``leading`` control/unknown tokens, the 256 byte tokens, then the reply's pieces."""
    import gguf

    tokens = [t for t, _ in leading]
    types = [k for _, k in leading]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(gguf.TokenType.BYTE)
    for t in reply_tokens:
        if t not in tokens:
            tokens.append(t)
            types.append(gguf.TokenType.NORMAL)
    return _Vocab(tokens, types)


def _bigram_weights(
    vocab: _Vocab, chain: Sequence[str], n_embd: int, rng: np.random.Generator, gain: float
) -> tuple[np.ndarray, np.ndarray]:
    """Unit random embeddings, and output rows that map each chain token to the next."""
    if len(set(chain)) != len(chain):
        raise ValueError(f"a bigram chain cannot repeat a token: {chain}")
    index = vocab.index
    embd = rng.standard_normal((len(vocab.tokens), n_embd)).astype(np.float32)
    embd /= np.linalg.norm(embd, axis=1, keepdims=True)
    output = np.zeros_like(embd)
    for prev, nxt in itertools.pairwise(chain):
        output[index[nxt]] += gain * embd[index[prev]]
    return embd, output


def _add_spm_vocab(w: Any, vocab: _Vocab, unk: int, bos: int, eos: int) -> None:
    w.add_tokenizer_model("llama")
    w.add_token_list(vocab.tokens)
    w.add_token_scores([0.0] * len(vocab.tokens))
    w.add_token_types(vocab.types)
    w.add_unk_token_id(unk)
    w.add_bos_token_id(bos)
    w.add_eos_token_id(eos)
    w.add_add_bos_token(True)
    w.add_add_space_prefix(False)


def _finish(w: Any, path: Path) -> Path:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _small(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def _ones(n: int) -> np.ndarray:
    return np.ones(n, dtype=np.float32)


def _zeros(*shape: int) -> np.ndarray:
    return np.zeros(shape, dtype=np.float32)


# ---- llama ------------------------------------------------------------------------------


def write_tiny_llama(
    path: Path,
    reply_tokens: tuple[str, ...] = ("\u2581Hi", "\u2581there", "!"),
    end_token: str = "<|im_end|>",
    template: str | None = CHATML_TEMPLATE,
    specials: tuple[str, ...] = ("<|im_start|>", "<|im_end|>"),
    trigger: str = "<0x0A>",
    seed: int = 0,
) -> Path:
    """A llama-arch GGUF whose reply to any ChatML prompt is ``reply_tokens`` then ``end_token``.

    ``trigger`` is the last token of the generation prompt ('\\n' as a byte token);
    the reply starts with a leading space on purpose (the adapter must strip it).
    """
    import gguf

    control = gguf.TokenType.CONTROL
    vocab = _vocab(
        [("<unk>", gguf.TokenType.UNKNOWN), ("<s>", control), ("</s>", control)]
        + [(s, control) for s in specials],
        reply_tokens,
    )
    rng = np.random.default_rng(seed)
    embd, output = _bigram_weights(
        vocab, [trigger, *reply_tokens, end_token], N_EMBD, rng, gain=40.0
    )

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny-test-llama")
    w.add_context_length(512)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    _add_spm_vocab(w, vocab, unk=0, bos=1, eos=vocab.index[end_token])
    if template is not None:
        w.add_chat_template(template)

    w.add_tensor("token_embd.weight", embd)
    w.add_tensor("output_norm.weight", _ones(N_EMBD))
    w.add_tensor("output.weight", output)
    for i in range(N_LAYER):
        p = f"blk.{i}"
        w.add_tensor(f"{p}.attn_norm.weight", _ones(N_EMBD))
        for name in ("attn_q", "attn_k", "attn_v"):
            w.add_tensor(f"{p}.{name}.weight", _small(rng, (N_EMBD, N_EMBD)))
        w.add_tensor(f"{p}.attn_output.weight", _zeros(N_EMBD, N_EMBD))
        w.add_tensor(f"{p}.ffn_norm.weight", _ones(N_EMBD))
        w.add_tensor(f"{p}.ffn_gate.weight", _small(rng, (N_FF, N_EMBD)))
        w.add_tensor(f"{p}.ffn_up.weight", _small(rng, (N_FF, N_EMBD)))
        w.add_tensor(f"{p}.ffn_down.weight", _zeros(N_EMBD, N_FF))
    return _finish(w, path)


# ---- gemma4 -----------------------------------------------------------------------------

G4_LAYERS = (True, False)  # sliding-window layer, then a full-attention layer
G4_HEAD_DIM_SWA = 16
G4_HEAD_DIM_FULL = 32  # Gemma 4's full-attention layers use bigger heads
G4_N_HEAD = 4
G4_N_HEAD_KV = 2
G4_N_EXPERT = 4
G4_N_EXPERT_USED = 2
G4_N_FF_EXP = 32
G4_SLIDING_WINDOW = 32


def write_tiny_gemma4(
    path: Path,
    reply_tokens: tuple[str, ...] = GEMMA4_REPLY,
    end_token: str = "<turn|>",
    template: str | None = GEMMA4_TEMPLATE,
    trigger: str = "<channel|>",
    eot_token: str | None = "<turn|>",
    context_length: int = 1024,
    seed: int = 0,
) -> Path:
    """A ``gemma4``-arch GGUF whose reply after the generation prompt is ``reply_tokens``.

    ``trigger`` is the last token of the template's generation prompt (the closing
    ``<channel|>`` of the empty thought block). ``<eos>`` is the EOS token and
    ``eot_token`` (``<turn|>``) the end-of-turn token, as in Gemma 4.
    """
    import gguf

    control = gguf.TokenType.CONTROL
    vocab = _vocab(
        [(t, control) for t in GEMMA4_LEADING[:3]]
        + [(GEMMA4_LEADING[3], gguf.TokenType.UNKNOWN)]
        + [(t, control) for t in GEMMA4_SPECIALS]
        + [(t, gguf.TokenType.USER_DEFINED) for t in GEMMA4_VISIBLE]
        + [(t, control) for t in GEMMA4_CONTROLS],
        reply_tokens,
    )
    index = vocab.index
    rng = np.random.default_rng(seed)
    embd, output = _bigram_weights(
        vocab, [trigger, *reply_tokens, end_token], N_EMBD, rng, gain=5.0
    )

    arch = gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.GEMMA4]
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name("tiny-test-gemma4")
    w.add_context_length(context_length)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(len(G4_LAYERS))
    w.add_feed_forward_length(N_FF)
    w.add_head_count(G4_N_HEAD)
    w.add_head_count_kv(G4_N_HEAD_KV)
    w.add_key_length(G4_HEAD_DIM_FULL)
    w.add_value_length(G4_HEAD_DIM_FULL)
    w.add_key_length_swa(G4_HEAD_DIM_SWA)
    w.add_value_length_swa(G4_HEAD_DIM_SWA)
    w.add_rope_dimension_count(G4_HEAD_DIM_FULL)
    w.add_rope_dimension_count_swa(G4_HEAD_DIM_SWA)
    w.add_rope_freq_base(1_000_000.0)
    w.add_rope_freq_base_swa(10_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_sliding_window(G4_SLIDING_WINDOW)
    w.add_sliding_window_pattern(list(G4_LAYERS))
    w.add_shared_kv_layers(0)
    w.add_embedding_length_per_layer_input(0)
    w.add_expert_count(G4_N_EXPERT)
    w.add_expert_used_count(G4_N_EXPERT_USED)
    w.add_expert_feed_forward_length(G4_N_FF_EXP)
    w.add_final_logit_softcapping(30.0)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    _add_spm_vocab(w, vocab, unk=index["<unk>"], bos=index["<bos>"], eos=index["<eos>"])
    if eot_token is not None:
        w.add_eot_token_id(index[eot_token])
    w.add_pad_token_id(index["<pad>"])
    if template is not None:
        w.add_chat_template(template)

    w.add_tensor("token_embd.weight", embd)
    w.add_tensor("output_norm.weight", _ones(N_EMBD))
    w.add_tensor("output.weight", output)
    # Proportional RoPE of the full-attention layers (all dimensions rotated here).
    w.add_tensor("rope_freqs.weight", _ones(G4_HEAD_DIM_FULL // 2))
    for i, swa in enumerate(G4_LAYERS):
        p = f"blk.{i}"
        hd = G4_HEAD_DIM_SWA if swa else G4_HEAD_DIM_FULL
        w.add_tensor(f"{p}.attn_norm.weight", _ones(N_EMBD))
        w.add_tensor(f"{p}.attn_q.weight", _small(rng, (G4_N_HEAD * hd, N_EMBD)))
        w.add_tensor(f"{p}.attn_k.weight", _small(rng, (G4_N_HEAD_KV * hd, N_EMBD)))
        w.add_tensor(f"{p}.attn_v.weight", _small(rng, (G4_N_HEAD_KV * hd, N_EMBD)))
        w.add_tensor(f"{p}.attn_q_norm.weight", _ones(hd))
        w.add_tensor(f"{p}.attn_k_norm.weight", _ones(hd))
        w.add_tensor(f"{p}.attn_output.weight", _zeros(N_EMBD, G4_N_HEAD * hd))
        w.add_tensor(f"{p}.post_attention_norm.weight", _ones(N_EMBD))
        # dense MLP (the "shared expert")
        w.add_tensor(f"{p}.ffn_norm.weight", _ones(N_EMBD))
        w.add_tensor(f"{p}.ffn_gate.weight", _small(rng, (N_FF, N_EMBD)))
        w.add_tensor(f"{p}.ffn_up.weight", _small(rng, (N_FF, N_EMBD)))
        w.add_tensor(f"{p}.ffn_down.weight", _zeros(N_EMBD, N_FF))
        w.add_tensor(f"{p}.post_ffw_norm_1.weight", _ones(N_EMBD))
        # mixture of experts: router, fused gate+up experts, down experts
        w.add_tensor(f"{p}.pre_ffw_norm_2.weight", _ones(N_EMBD))
        w.add_tensor(f"{p}.ffn_gate_inp.weight", _small(rng, (G4_N_EXPERT, N_EMBD)))
        w.add_tensor(f"{p}.ffn_gate_inp.scale", _ones(N_EMBD))
        w.add_tensor(
            f"{p}.ffn_gate_up_exps.weight",
            _small(rng, (G4_N_EXPERT, 2 * G4_N_FF_EXP, N_EMBD)),
        )
        w.add_tensor(f"{p}.ffn_down_exps.weight", _zeros(G4_N_EXPERT, N_EMBD, G4_N_FF_EXP))
        w.add_tensor(f"{p}.ffn_down_exps.scale", _ones(G4_N_EXPERT))
        w.add_tensor(f"{p}.post_ffw_norm_2.weight", _ones(N_EMBD))
        w.add_tensor(f"{p}.post_ffw_norm.weight", _ones(N_EMBD))
        w.add_tensor(f"{p}.layer_output_scale.weight", _ones(1))
    return _finish(w, path)
