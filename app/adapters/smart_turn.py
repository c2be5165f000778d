"""Smart Turn v3.2 on ONNX Runtime: has the speaker finished their turn? (30-50 ms a call)

The model (``smart-turn-v3.2-cpu.onnx``, 8.7 MB int8, BSD-2-Clause, by Daily/Pipecat) is a
Whisper-tiny encoder with a classifier head. It reads the last 8 s of the utterance and
returns the probability that the turn is complete, judged from intonation, pace and words,
so the pipeline can end a turn on a short pause when the sentence sounds finished and wait
longer when it trails off ("I would like to go to the ...").

It ships inside the ``pipecat-ai`` wheel, whose own dependencies are heavy (numba, openai,
aiohttp, ...), so install it with ``pip install --no-deps pipecat-ai==1.14.0``; this module
finds the file through the package's location without importing pipecat.

Input contract (the same as pipecat's ``LocalSmartTurnAnalyzerV3``): 16 kHz mono float audio,
keep the last 128 000 samples or left-pad with zeros to that length, normalise the waveform
to zero mean and unit variance, then Whisper's 80-bin log-mel features (n_fft 400, hop 160,
last frame dropped) -> ``input_features`` [1, 80, 800] -> ``logits`` [1, 1], which is
already a sigmoid probability despite its name. The features come from faster-whisper's
numpy feature extractor, so neither transformers nor torch is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from app.adapters.errors import EngineLoadError
from app.adapters.onnx import cpu_session
from app.core.events import FloatAudio

SAMPLE_RATE = 16_000
WINDOW_SECONDS = 8
WINDOW_SAMPLES = SAMPLE_RATE * WINDOW_SECONDS
N_MELS = 80
N_FRAMES = WINDOW_SAMPLES // 160
MODEL_FILE = "smart-turn-v3.2-cpu.onnx"
_INPUT_NAME = "input_features"
_NORM_EPS = 1e-7


def embedded_model_path() -> Path:
    """The Smart Turn v3.2 CPU model inside the installed ``pipecat-ai`` wheel (not imported)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("pipecat")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise EngineLoadError(
            "pipecat-ai is not installed, so the Smart Turn model is missing "
            "(pip install --no-deps pipecat-ai==1.14.0)"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    return root / "audio" / "turn" / "smart_turn" / "data" / MODEL_FILE


class SmartTurnDetector:
    """End-of-turn classifier: ``complete_probability(utterance)`` in [0, 1]."""

    sample_rate = SAMPLE_RATE

    def __init__(self, model_path: Path | None = None, threads: int = 1) -> None:
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        path = Path(model_path) if model_path is not None else embedded_model_path()
        from faster_whisper.feature_extractor import FeatureExtractor

        self._session: Any = cpu_session(path, "Smart Turn model", threads)
        inputs = self._session.get_inputs()
        expected = (_INPUT_NAME, [N_MELS, N_FRAMES])
        if len(inputs) != 1 or (inputs[0].name, list(inputs[0].shape[1:])) != expected:
            found = [(i.name, i.shape) for i in inputs]
            raise EngineLoadError(
                f"Smart Turn model {path} does not take {_INPUT_NAME} [batch, {N_MELS}, "
                f"{N_FRAMES}] (found {found})"
            )
        self.model_path = path
        self._features: Any = FeatureExtractor(
            feature_size=N_MELS, sampling_rate=SAMPLE_RATE, chunk_length=WINDOW_SECONDS
        )

    def features(self, audio: FloatAudio) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The model's input for ``audio``: Whisper log-mel features, shape (80, 800)."""
        window = _last_window(audio)
        # Waveform normalisation over the padded window, as WhisperFeatureExtractor
        # does with do_normalize=True (the model was trained on that).
        window = (window - window.mean()) / np.sqrt(window.var() + _NORM_EPS)
        mel = self._features(window, padding=0)
        return np.ascontiguousarray(mel, dtype=np.float32)

    def complete_probability(self, audio: FloatAudio) -> float:
        """Probability that the utterance so far (16 kHz mono float32) is a finished turn."""
        features = self.features(audio)[np.newaxis]
        (out,) = self._session.run(None, {_INPUT_NAME: features})
        return float(np.asarray(out).reshape(-1)[0])


def _last_window(audio: FloatAudio) -> np.ndarray[Any, np.dtype[np.float32]]:
    samples = np.asarray(audio, dtype=np.float32)
    if samples.ndim != 1:
        raise ValueError(f"SmartTurnDetector needs mono 1-D audio, got shape {samples.shape}")
    if samples.size >= WINDOW_SAMPLES:
        return np.ascontiguousarray(samples[-WINDOW_SAMPLES:])
    window = np.zeros(WINDOW_SAMPLES, dtype=np.float32)
    if samples.size:
        window[-samples.size :] = samples
    return window
