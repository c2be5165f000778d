"""The short-window transcription: its padding/length arithmetic, its checks, and (slow) the
real model on speech the test makes, against the 30 s window."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.adapters.whisper_asr import (
    WINDOW_FRAMES,
    default_cpu_threads,
    fit_features,
    max_new_tokens,
    window_frames,
)
from app.adapters.whisper_text import collapse_loop, repeats_itself, verdict
from bench.asr import wer
from tests.adapters.conftest import espeak_speech


def test_window_is_the_utterance_plus_padding_in_even_frames() -> None:
    # 1 s = 100 frames of 10 ms; 0.5 s padding = 50 more
    assert window_frames(16_000, 0.5) == 150
    # a partial frame counts, and the total is rounded up to even for the encoder's stride
    assert window_frames(16_001, 0.5) == 152
    assert window_frames(16_000, 0.0) == 100
    assert window_frames(0, 1.0) == 0


def test_utterance_that_does_not_fit_one_window_goes_the_long_way() -> None:
    assert window_frames(29 * 16_000, 1.0) == WINDOW_FRAMES
    assert window_frames(29 * 16_000 + 160, 1.0) is None
    assert window_frames(45 * 16_000, 0.5) is None


def test_negative_padding_counts_as_none() -> None:
    assert window_frames(16_000, -2.0) == 100


def test_features_are_zero_padded_like_the_30s_window_or_cut() -> None:
    features = np.ones((80, 101), np.float32)
    padded = fit_features(features, 150)
    assert padded.shape == (80, 150)
    assert np.all(padded[:, :101] == 1.0) and np.all(padded[:, 101:] == 0.0)
    cut = fit_features(features, 100)
    assert cut.shape == (80, 100) and cut.flags["C_CONTIGUOUS"]


def test_decoded_tokens_are_capped_by_utterance_length() -> None:
    assert max_new_tokens(16_000, 400) == 28  # 1 s: 12 tokens/s + 16
    assert max_new_tokens(10 * 16_000, 400) == 136
    assert max_new_tokens(60 * 16_000, 400) == 400  # never past the model's own limit
    assert max_new_tokens(0, 400) == 16


def test_a_phrase_said_twice_in_a_row_is_doubtful() -> None:
    looped = "The quick round fox jump over the lazy dog. " * 2
    assert repeats_itself(looped)
    assert verdict(0.01, -0.3, looped) == "doubtful"
    assert not repeats_itself("I really really like it.")  # two words twice is speech
    assert not repeats_itself("Why is the sky blue?")


def test_a_transcript_that_starts_over_is_cut_to_its_first_pass() -> None:
    assert collapse_loop("Stop. Stop. Stop. Stop.") == "Stop."
    assert collapse_loop("Good morning Good morning Good morning Good") == "Good morning"
    assert collapse_loop("Can you tell me a joke? Can you tell me a joke? Can you") == (
        "Can you tell me a joke?"
    )


def test_real_repetition_is_left_alone() -> None:
    assert collapse_loop("bye bye") == "bye bye"  # short phrases need three passes
    assert collapse_loop("I really really like it.") == "I really really like it."
    assert collapse_loop("Hello there.") == "Hello there."
    assert collapse_loop("") == ""
    # a loop after other words is not a restart: left for the doubtful check
    looped_late = "So the dog. The dog. The dog."
    assert collapse_loop(looped_late) == looped_late


def test_verdict_follows_faster_whispers_thresholds() -> None:
    assert verdict(0.9, -1.5, "you") == "silence"
    assert verdict(0.9, -0.2, "Hello there.") == "ok"  # confident text beats no-speech
    assert verdict(0.1, -1.5, "Hello there.") == "doubtful"  # improbable: redo it
    assert verdict(0.1, -0.2, "ha " * 60) == "doubtful"  # compresses too well
    assert verdict(0.1, -0.2, "What is the capital of Australia?") == "ok"


def test_whisper_takes_one_thread_on_a_two_core_machine() -> None:
    # measured: on 2 cores two CTranslate2 threads were ~1.7x slower than one (bench asr)
    assert default_cpu_threads(1) == 1
    assert default_cpu_threads(2) == 1
    assert default_cpu_threads(8) == 2


def test_word_error_rate_counts_word_edits() -> None:
    assert wer([("Why is the sky blue?", "why is the sky blue")]) == 0.0
    assert wer([("why is the sky blue", "why isn't this guy blue")]) == pytest.approx(3 / 5)
    assert wer([("a b", "a b c d")]) == 1.0


SENTENCES = [
    "Why is the sky blue?",
    "What is the capital of Australia?",
    "Summarize the plot of Romeo and Juliet in one sentence.",
    "Remind me to call my sister tomorrow morning.",
]


@pytest.mark.slow
def test_short_window_hears_what_the_30s_window_hears(
    tmp_path: Path, normalise: Callable[[str], str]
) -> None:
    from app.adapters.whisper_asr import WhisperRecognizer

    asr = WhisperRecognizer()
    assert asr.short_window  # the app's way
    for index, sentence in enumerate(SENTENCES):
        speech = espeak_speech(sentence, tmp_path / f"s{index}.wav")
        asr.short_window = True
        short = asr.transcribe(speech)
        assert asr.last_path == "short", sentence  # not quietly redone the slow way
        asr.short_window = False
        full = asr.transcribe(speech)
        assert asr.last_path == "full"
        assert normalise(short) == normalise(sentence), (short, full)
        assert wer([(sentence, short)]) <= wer([(sentence, full)])


@pytest.mark.slow
def test_a_turn_longer_than_one_window_is_transcribed_whole(tmp_path: Path) -> None:
    from app.adapters.whisper_asr import WhisperRecognizer

    asr = WhisperRecognizer()
    first = espeak_speech("What is the capital of Australia?", tmp_path / "a.wav")
    second = espeak_speech("Why is the sky blue?", tmp_path / "b.wav")
    pause = np.zeros(31 * 16_000, np.float32)
    text = asr.transcribe(np.concatenate([first, pause, second]).astype(np.float32))
    assert asr.last_path == "full"
    assert "australia" in text.lower() and "sky blue" in text.lower()


class _FakeCT2:
    """Stands in for ``ctranslate2.models.Whisper``: records what it was given."""

    def __init__(self) -> None:
        self.encoded_frames: list[int] = []
        self.detected = 0

    def encode(self, features: object, to_cpu: bool) -> str:
        self.encoded_frames.append(np.asarray(features).shape[-1])
        return "encoding"

    def detect_language(self, encoded: str) -> list[list[tuple[str, float]]]:
        assert encoded == "encoding"  # on the short encoding, not a 30 s one
        self.detected += 1
        return [[("<|de|>", 0.93), ("<|en|>", 0.05)]]

    def generate(self, encoded: str, prompts: list[list[int]], **options: object) -> list[object]:
        from types import SimpleNamespace

        return [SimpleNamespace(sequences_ids=[[7, 8]], scores=[-0.1], no_speech_prob=0.01)]


class _FakeTokenizer:
    def decode(self, tokens: list[int]) -> str:
        return " Guten Tag."


def _fake_recognizer(ct2: _FakeCT2, language: str | None, asked: list[str]) -> Any:
    """The real adapter's logic around a fake CTranslate2 model."""
    from types import SimpleNamespace

    from app.adapters.whisper_asr import WhisperRecognizer

    asr = object.__new__(WhisperRecognizer)
    asr._model = SimpleNamespace(
        model=ct2,
        feature_extractor=lambda samples: np.ones((80, samples.size // 160 + 1), np.float32),
        max_length=448,
        get_prompt=lambda tokenizer, previous, without_timestamps, hotwords=None: [1, 2, 3],
    )
    asr.language, asr.multilingual, asr.short_window = language, language is None, True
    asr.beam_size, asr.full_beam_size, asr.pad_s, asr.pad_kind = 5, 5, 2.0, "silence"
    asr.no_repeat_ngram_size, asr._tokenizers, asr.doubtful_redo = 0, {}, "short"
    asr.hotwords = None

    def tokenizer_for(language: str) -> _FakeTokenizer:
        asked.append(language)
        return _FakeTokenizer()

    asr._tokenizer = tokenizer_for
    asr._suppressed = lambda tokenizer: []
    return asr


def test_multilingual_model_detects_language_on_the_short_encoding() -> None:
    ct2 = _FakeCT2()
    asked: list[str] = []
    asr = _fake_recognizer(ct2, None, asked)
    speech = np.full(16_000, 0.1, np.float32)
    assert asr.transcribe(speech) == "Guten Tag."
    assert ct2.encoded_frames == [300]  # 1 s + 2 s of padding, not 3,000 frames
    assert ct2.detected == 1 and asked == ["de"] and asr.last_language == "de"
    assert asr.last_path == "short"


class _UnsureCT2(_FakeCT2):
    """Decodes with a low likelihood (a doubtful result) at the app's padding, and with a
    better one at the redo's."""

    def generate(self, encoded: str, prompts: list[list[int]], **options: object) -> list[object]:
        from types import SimpleNamespace

        score = -1.6 if self.encoded_frames[-1] == 300 else -1.2
        return [SimpleNamespace(sequences_ids=[[7, 8]], scores=[score], no_speech_prob=0.2)]


def test_a_doubtful_decode_is_redone_once_on_the_short_window_not_the_30s_way() -> None:
    """The 30 s redo (temperature fallback) took 4x the median on short clips."""
    ct2 = _UnsureCT2()
    asr = _fake_recognizer(ct2, "en", [])

    def no_full_window(samples: object) -> str:
        raise AssertionError("redone the 30 s way")

    asr._transcribe_full = no_full_window
    assert asr.transcribe(np.full(16_000, 0.1, np.float32)) == "Guten Tag."
    assert ct2.encoded_frames == [300, 200]  # 1 s + 2 s, then 1 s + 1 s of padding
    assert asr.last_path == "short-redo"
    asr.doubtful_redo = "full"  # the old way, for bench asr's before/after
    asr._transcribe_full = lambda samples: "the 30 s way"
    assert asr.transcribe(np.full(16_000, 0.1, np.float32)) == "the 30 s way"
    assert asr.last_path == "full"


def test_the_better_of_a_doubtful_decode_and_its_redo_is_kept() -> None:
    from app.adapters.whisper_text import ShortDecode, better_decode

    unsure = ShortDecode("The lone air", "doubtful", -1.1)
    likelier = ShortDecode("Hello there", "doubtful", -1.05)
    looping = ShortDecode("the dog barked the dog barked", "doubtful", -0.4)
    sure = ShortDecode("Hello there.", "ok", -0.5)
    nothing = ShortDecode("", "silence", -1.4)
    assert better_decode(unsure, sure) is sure
    assert better_decode(unsure, likelier) is likelier
    assert better_decode(looping, unsure) is unsure  # a loop loses to likelier-looking words
    assert better_decode(unsure, nothing) is nothing  # redone as no speech: it was noise
    assert better_decode(sure, nothing) is sure


def test_warm_up_runs_both_ways_through_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old warm-up fed digital silence, which never reaches the model, so the first
    turn paid the first-call costs (1.2-1.8 s when it was redone on the 30 s window)."""
    from app.adapters.whisper_asr import WhisperRecognizer

    asr = WhisperRecognizer()
    ran: list[str] = []
    short, full = asr._transcribe_short, asr._transcribe_full

    def recording_short(samples: np.ndarray, frames: int) -> str | None:
        ran.append("short")
        return short(samples, frames)

    def recording_full(samples: np.ndarray) -> str:
        ran.append("full")
        return full(samples)

    monkeypatch.setattr(asr, "_transcribe_short", recording_short)
    monkeypatch.setattr(asr, "_transcribe_full", recording_full)
    asr.warm()
    assert ran == ["short", "full"]
    assert asr.last_language == "en"
