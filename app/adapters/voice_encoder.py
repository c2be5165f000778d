"""Speaker embeddings (voice prints) with the GE2E encoder of Resemblyzer, without torch.

The model (``resemblyzer/pretrained.pt``, 17 MB, Apache-2.0) ships in the ``Resemblyzer``
wheel, installed with ``pip install --no-deps Resemblyzer==0.1.4`` (its own dependencies
are torch, librosa and webrtcvad, none of which is needed here): this module finds the
file through the package's location, reads its weights without torch
(``torch_legacy``), writes its three LSTM layers as a small ONNX graph in memory
(``onnx_graph``) and runs that on ONNX Runtime; the mel frames and the last linear layer
are numpy. (The LSTM stepped in numpy took 4x as long: ~190 ms against ~45 ms for 2 s of
speech on the busy two-core machine, Python's per-frame overhead and OpenBLAS's threaded
products on a few rows being the cost.)

The network, as the wheel's ``voice_encoder.py`` and ``hparams.py`` describe it: 40 mel
channels (power, not log; 25 ms Hann window, 10 ms hop, Slaney scale and norm, as
``librosa.feature.melspectrogram``) -> a 3-layer LSTM of 256 -> a 256 linear layer -> ReLU
-> L2 norm. An utterance is cut into 1.6 s partials (1.3 a second, the last kept if it
covers 75 %), each is embedded, and the mean of the partial embeddings, normalised again, is
the utterance's embedding. Here only the partials with at least half the loudest one's power
count (six at most, the loudest), weighted by their power: when a television or a flatmate
speaks under the user, the nearest voice (the loudest) decides whose turn it is.
Before that the audio is brought up to -30 dBFS (never down) and long silences are cut out
(the wheel uses webrtcvad there; an energy gate does it here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from app.adapters.errors import EngineLoadError
from app.adapters.onnx import cpu_session
from app.core.events import FloatAudio

SAMPLE_RATE = 16_000
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms
N_MELS = 40
PARTIAL_FRAMES = 160  # 1.6 s
PARTIALS_PER_S = 1.3
MIN_COVERAGE = 0.75
TARGET_DBFS = -30.0
INT16_MAX = 2**15 - 1
MAX_PARTIALS = 6
NEAR_POWER = 0.5
"""Partials under half the loudest one's power are another, farther voice (or a pause)."""
MODEL_FILE = "pretrained.pt"
_LAYERS = 3
_ONNX_GATES = np.r_[0:256, 768:1024, 256:512, 512:768]
"""PyTorch stores an LSTM's gates i, f, g, o; ONNX wants i, o, f, c (c is PyTorch's g)."""


def embedded_model_path() -> Path:
    """The encoder's weights inside the installed ``Resemblyzer`` wheel (not imported)."""
    from app.models.paths import package_dir

    root = package_dir("resemblyzer")
    if root is None:
        raise EngineLoadError("Resemblyzer is not installed, so the voice print model is "
                              "missing (pip install --no-deps Resemblyzer==0.1.4)")
    return root / MODEL_FILE


def _hz_to_mel(hz: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Slaney's mel scale: linear below 1 kHz, logarithmic above."""
    mel = hz / (200.0 / 3)
    log_part = hz >= 1000.0
    return np.where(log_part, 15.0 + np.log(np.maximum(hz, 1e-10) / 1000.0)
                    / (np.log(6.4) / 27.0), mel)


def _mel_to_hz(mel: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    hz = mel * (200.0 / 3)
    return np.where(mel >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (mel - 15.0)), hz)


def mel_filters() -> np.ndarray[Any, Any]:
    """[40, 201] triangular filters, Slaney-normalised (constant energy per channel)."""
    edges = _mel_to_hz(np.linspace(_hz_to_mel(np.array(0.0)), _hz_to_mel(np.array(8000.0)),
                                   N_MELS + 2))
    bins = np.linspace(0, SAMPLE_RATE / 2, 1 + N_FFT // 2)
    widths = np.diff(edges)
    ramps = edges[:, None] - bins[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (edges[2:] - edges[:-2]))[:, None]
    return weights.astype(np.float32)


_WINDOW = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)


def mel_frames(audio: FloatAudio, filters: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """[frames, 40] power mel spectrogram, frames centred on every 10 ms (reflect padding)."""
    pad = N_FFT // 2
    padded = np.pad(audio, pad, mode="reflect") if audio.size > pad else np.pad(audio, pad)
    count = 1 + (padded.size - N_FFT) // HOP
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP][:count]
    power = np.abs(np.fft.rfft(frames * _WINDOW, axis=1)) ** 2
    return (power @ filters.T).astype(np.float32)  # type: ignore[no-any-return]


def normalize_volume(audio: FloatAudio) -> FloatAudio:
    """Up to -30 dBFS, never down (as the model's training data was)."""
    rms = float(np.sqrt(np.mean(np.square(audio * INT16_MAX)))) if audio.size else 0.0
    if rms <= 0.0:
        return audio
    change_db = TARGET_DBFS - 20 * float(np.log10(rms / INT16_MAX))
    if change_db <= 0:
        return audio
    louder: FloatAudio = (audio * 10 ** (change_db / 20)).astype(np.float32)
    return louder


def trim_long_silences(audio: FloatAudio, window: int = 480) -> FloatAudio:
    """Cut quiet stretches longer than about 0.2 s: 30 ms windows under 1/20 of the
    utterance's loud level (and under -50 dBFS) are quiet; speech is dilated by six windows
    on each side so the edges of words stay."""
    count = audio.size // window
    if count < 3:
        return audio
    levels = np.sqrt(np.mean(np.square(audio[:count * window].reshape(count, window)), axis=1))
    loud = float(np.percentile(levels, 95))
    voiced = levels > max(0.05 * loud, 10 ** (-50 / 20))
    kept = np.convolve(voiced.astype(np.int32), np.ones(13, dtype=np.int32), mode="same") > 0
    if not kept.any():
        return audio
    return audio[:count * window][np.repeat(kept, window)]


def partial_slices(frame_count: int) -> list[slice]:
    """Where the 1.6 s partials start, 1.3 a second; the last is dropped when it covers less
    than 75 % of a partial (unless it is the only one)."""
    step = round(SAMPLE_RATE / PARTIALS_PER_S / HOP)
    steps = max(1, frame_count - PARTIAL_FRAMES + step + 1)
    slices = [slice(i, i + PARTIAL_FRAMES) for i in range(0, steps, step)]
    covered = (frame_count - slices[-1].start) / PARTIAL_FRAMES
    if covered < MIN_COVERAGE and len(slices) > 1:
        slices.pop()
    return slices


class VoiceEncoder:
    """``embed(audio)``: the unit-length 256-number voice print of 16 kHz mono speech."""

    sample_rate = SAMPLE_RATE
    size = 256

    def __init__(self, model_path: Path | None = None,
                 max_partials: int | None = MAX_PARTIALS) -> None:
        """``max_partials``: a long utterance is judged on at most this many partials, its
        loudest (a few ms each, batched), None: on all its loud ones."""
        from app.adapters.torch_legacy import CheckpointError, load_legacy_checkpoint

        path = Path(model_path) if model_path is not None else embedded_model_path()
        if not path.is_file():
            raise EngineLoadError(f"voice print model {path} is missing")
        try:
            state = load_legacy_checkpoint(path)["model_state"]
            if state["lstm.weight_ih_l0"].shape != (1024, N_MELS):
                raise EngineLoadError(f"voice print model {path} is not the 40-mel GE2E encoder")
            graph = lstm_graph(state)
            self._linear = (np.ascontiguousarray(state["linear.weight"].T), state["linear.bias"])
        except (CheckpointError, KeyError, TypeError, ValueError, IndexError) as exc:
            raise EngineLoadError(f"voice print model {path} does not load: {exc}") from exc
        self._session: Any = cpu_session(graph, "voice print model")
        self.model_path = path
        self.max_partials = max_partials
        self._filters = mel_filters()

    def embed(self, audio: FloatAudio) -> FloatAudio:
        """The voice print of an utterance (silence gives zeros)."""
        if audio.ndim != 1:
            raise ValueError(f"VoiceEncoder needs mono 1-D audio, got shape {audio.shape}")
        wav = trim_long_silences(normalize_volume(audio.astype(np.float32, copy=False)))
        frame_count = int(np.ceil((wav.size + 1) / HOP))
        slices = partial_slices(frame_count)
        needed = slices[-1].stop * HOP
        if needed >= wav.size:
            wav = np.pad(wav, (0, needed - wav.size))
        power = np.array([float(np.mean(np.square(wav[s.start * HOP:s.stop * HOP])))
                          for s in slices])
        near = np.flatnonzero(power >= NEAR_POWER * power.max())
        if self.max_partials is not None and near.size > self.max_partials:
            near = near[np.argsort(power[near])[-self.max_partials:]]
        near = np.sort(near)
        slices, power = [slices[i] for i in near], power[near]
        mels = mel_frames(wav, self._filters)
        batch = np.stack([mels[s] for s in slices])  # [partials, 160, 40]
        partials = self._forward(batch)
        weights = power / power.sum() if power.sum() > 0 else np.full(len(slices), 1 / len(slices))
        mean = weights @ partials
        norm = float(np.linalg.norm(mean))
        embedding: FloatAudio = (mean / norm if norm > 0 else mean).astype(np.float32)
        return embedding

    def _forward(self, batch: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """[partials, frames, 40] -> [partials, 256] unit vectors."""
        mels = np.ascontiguousarray(batch.transpose(1, 0, 2), dtype=np.float32)
        (hidden,) = self._session.run(["h3"], {"mels": mels})
        w_out, b_out = self._linear
        raw = np.maximum(hidden[0] @ w_out + b_out, 0.0)
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        out: np.ndarray[Any, Any] = raw / np.maximum(norms, 1e-12)
        return out


def lstm_graph(state: dict[str, np.ndarray[Any, Any]]) -> bytes:
    """The encoder's three LSTM layers as an ONNX model: ``mels`` [frames, partials, 40] ->
    ``h3`` [1, partials, 256], the last layer's final hidden state."""
    from app.adapters.onnx_graph import Node, model_bytes

    nodes: list[Node] = []
    weights: dict[str, np.ndarray[Any, Any]] = {"axis1": np.array([1], dtype=np.int64)}
    source = "mels"
    for n in range(_LAYERS):
        w = state[f"lstm.weight_ih_l{n}"][_ONNX_GATES]
        r = state[f"lstm.weight_hh_l{n}"][_ONNX_GATES]
        bias = np.concatenate([state[f"lstm.bias_ih_l{n}"][_ONNX_GATES],
                               state[f"lstm.bias_hh_l{n}"][_ONNX_GATES]])
        weights |= {f"w{n}": w[None], f"r{n}": r[None], f"b{n}": bias[None]}
        last = n == _LAYERS - 1
        outputs = ["", "h3"] if last else [f"y{n}"]
        nodes.append(Node("LSTM", [source, f"w{n}", f"r{n}", f"b{n}"], outputs,
                          (("hidden_size", 256),)))
        if not last:
            nodes.append(Node("Squeeze", [f"y{n}", "axis1"], [f"x{n + 1}"]))
            source = f"x{n + 1}"
    return model_bytes(nodes, weights,
                       {"mels": ["frames", "partials", N_MELS]},
                       {"h3": [1, "partials", 256]})
