"""The voice print encoder: Resemblyzer's GE2E weights read without torch, run in numpy.
One voice's utterances land close together, another voice's far away; a checkpoint that
asks for anything but tensors is refused."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import numpy as np
import pytest

from app.adapters.errors import EngineLoadError
from app.adapters.torch_legacy import LEGACY_MAGIC, CheckpointError, load_legacy_checkpoint
from app.adapters.voice_encoder import VoiceEncoder, embedded_model_path, mel_filters
from app.core.voice_gate import SAME_VOICE_SIMILARITY
from tests.support.voices import silence, voice_a, voice_b


@pytest.fixture(scope="module")
def encoder() -> VoiceEncoder:
    return VoiceEncoder()


def test_the_weights_load_without_torch() -> None:
    state = load_legacy_checkpoint(embedded_model_path())["model_state"]
    assert state["lstm.weight_ih_l0"].shape == (1024, 40)
    assert state["linear.weight"].dtype == np.float32
    import sys
    assert "torch" not in sys.modules


def test_mel_filters_cover_the_band_once() -> None:
    filters = mel_filters()
    assert filters.shape == (40, 201)
    assert (filters >= 0).all() and (filters.max(axis=1) > 0).all()


@pytest.mark.slow
def test_one_voice_is_close_to_itself_and_far_from_another(encoder: VoiceEncoder) -> None:
    a1 = encoder.embed(voice_a("What time is it right now?"))
    a2 = encoder.embed(voice_a("Remind me to water the plants tomorrow morning."))
    b1 = encoder.embed(voice_b("What time is it right now?"))
    assert a1.shape == (256,) and abs(float(np.linalg.norm(a1)) - 1) < 1e-5
    assert float(a1 @ a2) >= SAME_VOICE_SIMILARITY
    assert float(a1 @ b1) < SAME_VOICE_SIMILARITY - 0.1


@pytest.mark.slow
def test_the_nearest_voice_decides_when_another_speaks_under_it(encoder: VoiceEncoder) -> None:
    """A request (A) said over 12 s of a television (B, 12 dB quieter): the utterance is A's,
    as it is when A speaks alone; B alone is still B."""
    from tests.support.voices import ENROLMENT

    def at_db(audio: np.ndarray, db: float) -> np.ndarray:
        return audio * (10 ** (db / 20) / float(np.sqrt(np.mean(np.square(audio)))))

    print_a = encoder.embed(np.concatenate([voice_a(text) for text in ENROLMENT]))
    print_b = encoder.embed(np.concatenate([voice_b(text) for text in ENROLMENT]))
    television = at_db(np.concatenate([voice_b(text) for text in (
        "In the news this evening, the council has approved a new plan for the harbour.",
        "Work on the bridge will begin in the spring and take about two years.",
        "Heavy rain is expected along the coast for the rest of the week.")]), -32.0)
    request = at_db(voice_a("Could you give me a good recipe for pancakes for breakfast "
                            "tomorrow?"), -20.0)
    mixed = television.copy()
    start = int(4.0 * 16_000)
    mixed[start:start + request.size] += request
    heard = encoder.embed(mixed.astype(np.float32))
    assert float(heard @ print_a) >= SAME_VOICE_SIMILARITY > float(heard @ print_b)
    alone = encoder.embed(television.astype(np.float32))
    assert float(alone @ print_b) >= SAME_VOICE_SIMILARITY > float(alone @ print_a)


@pytest.mark.slow
def test_a_voice_print_of_a_short_request_takes_tens_of_ms(encoder: VoiceEncoder) -> None:
    clip = voice_a("What time is it right now?")  # about 1.5 s
    encoder.embed(clip)
    started = time.perf_counter()
    encoder.embed(clip)
    assert time.perf_counter() - started < 0.5  # ~40-70 ms here; generous for a busy CI


def test_silence_gives_no_voice(encoder: VoiceEncoder) -> None:
    assert not np.isnan(encoder.embed(silence(1.0))).any()


def _legacy(path: Path, obj: object) -> None:
    with path.open("wb") as file:
        for part in (LEGACY_MAGIC, 1001, {"little_endian": True}, obj, []):
            pickle.dump(part, file, protocol=2)


class _Evil:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("pwned",))


def test_a_checkpoint_that_runs_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evil.pt"
    _legacy(path, {"model_state": _Evil()})
    with pytest.raises(CheckpointError, match="refused"):
        load_legacy_checkpoint(path)


def test_a_damaged_checkpoint_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "pretrained.pt"
    path.write_bytes(embedded_model_path().read_bytes()[:100_000])
    with pytest.raises(EngineLoadError, match=r"pretrained\.pt"):
        VoiceEncoder(path)
    with pytest.raises(EngineLoadError, match="missing"):
        VoiceEncoder(tmp_path / "absent.pt")


def _reference_lstm(state: dict[str, np.ndarray], frames: np.ndarray) -> np.ndarray:
    """PyTorch's LSTM equations, step by step in numpy: the last layer's final state."""
    def sigmoid(x: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-x))

    sequence = frames
    for n in range(3):
        w, r = state[f"lstm.weight_ih_l{n}"], state[f"lstm.weight_hh_l{n}"]
        b = state[f"lstm.bias_ih_l{n}"] + state[f"lstm.bias_hh_l{n}"]
        h, c, outputs = np.zeros(256), np.zeros(256), []
        for x in sequence:
            i, f, g, o = np.split(w @ x + r @ h + b, 4)  # PyTorch's gate order
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
            h = sigmoid(o) * np.tanh(c)
            outputs.append(h)
        sequence = np.array(outputs)
    return h


def test_the_onnx_graph_computes_the_lstm_as_pytorch_defines_it(encoder: VoiceEncoder) -> None:
    state = load_legacy_checkpoint(embedded_model_path())["model_state"]
    frames = np.random.default_rng(0).random((2, 30, 40)).astype(np.float32)
    (hidden,) = encoder._session.run(["h3"], {"mels": frames.transpose(1, 0, 2).copy()})
    for partial in range(2):
        expected = _reference_lstm(state, frames[partial].astype(np.float64))
        assert np.abs(hidden[0, partial] - expected).max() < 1e-4

