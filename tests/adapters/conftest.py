"""Shared fixtures for the adapter contract tests: test speech, model paths, tiny GGUFs.

Speech is made with Debian's espeak-ng (``-v en-us -s 140``: the voice Whisper tiny.en
transcribes reliably) and resampled to 16 kHz with the app's own resampler. Tiny
GGUF models are built, not trained (see ``write_tiny_llama``), so their replies are known.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from app.core.events import FloatAudio

FOX_TEXT = "the quick brown fox jumps over the lazy dog"


def espeak_speech(text: str, path: Path) -> FloatAudio:
    """``text`` spoken by espeak-ng, mono float32 at 16 kHz with 0.3 s of silence around it."""
    import soundfile as sf

    from app.adapters.resample import resample

    exe = shutil.which("espeak-ng")
    if exe is None:
        pytest.fail("espeak-ng is needed to make test speech (apt-get install espeak-ng)")
    subprocess.run([exe, "-v", "en-us", "-s", "140", "-w", str(path), text], check=True)
    data, rate = sf.read(str(path), dtype="float32", always_2d=False)
    speech = resample(data, int(rate), 16_000)
    pad = np.zeros(4_800, dtype=np.float32)
    return np.concatenate([pad, speech, pad])


@pytest.fixture(scope="session")
def fox_speech(tmp_path_factory: pytest.TempPathFactory) -> FloatAudio:
    return espeak_speech(FOX_TEXT, tmp_path_factory.mktemp("speech") / "fox.wav")


@pytest.fixture(scope="session")
def tiny_llama_gguf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield write_tiny_llama(tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf")


def _normalise(text: str) -> str:
    kept = "".join(ch if ch.isalnum() or ch.isspace() else " " for ch in text.lower())
    return " ".join(kept.split())


@pytest.fixture(scope="session")
def gguf_writer() -> Callable[..., Path]:
    """``write_tiny_llama`` for tests that need a variant (another template, none, ...)."""
    return write_tiny_llama


@pytest.fixture(scope="session")
def normalise() -> Callable[[str], str]:
    """Lowercase words without punctuation, for lenient transcript comparison."""
    return _normalise


@pytest.fixture(scope="session")
def fox_text() -> str:
    return FOX_TEXT


# ---- tiny GGUF writer ------------------------------------------------------------------
#
# The weights are built, not trained, so the reply is known: every layer's output
# projection is zero (the residual stream is just the token embedding), embeddings are
# random unit vectors, and each output row points at the embedding of the token that
# should come before it. The model is then a deterministic bigram machine: after the
# chat template's generation prompt it says exactly the scripted reply, then the
# end-of-turn token. That exercises template rendering, tokenization, streaming, stop
# handling and KV-cache reuse with a 0.5 MB file.

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

N_EMBD = 64
N_HEAD = 4
N_FF = 128
N_LAYER = 2


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

    tokens: list[str] = ["<unk>", "<s>", "</s>", *specials]
    types: list[int] = [
        gguf.TokenType.UNKNOWN,
        gguf.TokenType.CONTROL,
        gguf.TokenType.CONTROL,
        *([gguf.TokenType.CONTROL] * len(specials)),
    ]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(gguf.TokenType.BYTE)
    for t in reply_tokens:
        if t not in tokens:
            tokens.append(t)
            types.append(gguf.TokenType.NORMAL)
    n_vocab = len(tokens)
    index = {t: i for i, t in enumerate(tokens)}

    rng = np.random.default_rng(seed)
    embd = rng.standard_normal((n_vocab, N_EMBD)).astype(np.float32)
    embd /= np.linalg.norm(embd, axis=1, keepdims=True)
    # Output row j = scaled embedding of the token that should precede j.
    output = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    chain = [trigger, *reply_tokens, end_token]
    for prev, nxt in itertools.pairwise(chain):
        output[index[nxt]] += 40.0 * embd[index[prev]]

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
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * n_vocab)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(index[end_token])
    w.add_add_bos_token(True)
    w.add_add_space_prefix(False)
    if template is not None:
        w.add_chat_template(template)

    w.add_tensor("token_embd.weight", embd)
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", output)
    for i in range(N_LAYER):
        p = f"blk.{i}"
        w.add_tensor(f"{p}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v"):
            w.add_tensor(f"{p}.{name}.weight", _small(rng, (N_EMBD, N_EMBD)))
        w.add_tensor(f"{p}.attn_output.weight", np.zeros((N_EMBD, N_EMBD), dtype=np.float32))
        w.add_tensor(f"{p}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(f"{p}.ffn_gate.weight", _small(rng, (N_FF, N_EMBD)))
        w.add_tensor(f"{p}.ffn_up.weight", _small(rng, (N_FF, N_EMBD)))
        w.add_tensor(f"{p}.ffn_down.weight", np.zeros((N_EMBD, N_FF), dtype=np.float32))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _small(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)
