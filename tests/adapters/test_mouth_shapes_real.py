"""Mouth shapes from real voices: the spectral fallback tells eSpeak's "ah", "ee" and "oo"
apart (open, spread, rounded), and the phonemizers give the phonemes the viseme map was
written against (tests/core/test_visemes.py holds them as literals)."""

# ruff: noqa: RUF001 (IPA letters look like Latin ones: they are meant)

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from app.adapters.cjk_g2p import japanese_phonemizer, mandarin_phonemizer
from app.adapters.espeak_tts import EspeakSynthesizer
from app.adapters.piper_tts import PiperSynthesizer
from app.core.mouth_track import loudness, mouth_track
from app.core.visemes import Viseme, openness, syllables


def _main_shape(tts: EspeakSynthesizer, word: str) -> tuple[Viseme, float]:
    """The commonest shape while the word sounds, and the share of its hops."""
    track = mouth_track(tts.synthesize(word), tts.sample_rate)
    shapes = Counter(v for v, o in zip(track.visemes, track.openings, strict=True) if o > 0)
    shape, count = shapes.most_common(1)[0]
    return shape, count / sum(shapes.values())


@pytest.mark.parametrize(("word", "shape"), [
    ("ah", Viseme.A), ("ee", Viseme.I), ("oo", Viseme.U), ("oh", Viseme.O),
])
def test_the_spectrum_tells_espeaks_vowels_apart(word: str, shape: Viseme) -> None:
    found, share = _main_shape(EspeakSynthesizer(), word)
    assert found is shape
    assert share >= 0.6


def test_open_spread_and_rounded_vowels_are_three_different_mouths() -> None:
    tts = EspeakSynthesizer()
    a, i, u = (_main_shape(tts, w)[0] for w in ("ah", "ee", "oo"))
    assert openness(a) > max(openness(i), openness(u))  # open vs nearly closed
    assert len({a, i, u}) == 3


def test_piper_gives_the_ipa_the_map_reads() -> None:
    phonemes = PiperSynthesizer().phonemes("Maybe bread, food.")
    assert [s.viseme for s in syllables(phonemes)] == [Viseme.E, Viseme.I, Viseme.E,
                                                       Viseme.U]
    assert all(s.closed_before for s in syllables(phonemes))


def test_the_japanese_and_mandarin_phonemizers_give_what_the_map_was_written_for() -> None:
    assert japanese_phonemizer()("こんにちは、今日はいい天気ですね。") == \
        "koɲɲiʨiβa, kʲoː βa ii teŋkʲi desɨ ne."
    assert mandarin_phonemizer()("你好，今天天气很好。") == \
        "ni↓xau↓, ʨi→ntʰjɛ→ntʰjɛ→nʨʰi↘ xə↓n xau↓."


@pytest.mark.parametrize("word", ["see", "shoe"])
def test_a_hiss_keeps_the_mouth_shut_until_its_vowel(word: str) -> None:
    tts = EspeakSynthesizer()
    audio = tts.synthesize(word)
    track = mouth_track(audio, tts.sample_rate)
    level = loudness(audio, tts.sample_rate)
    audible = int(np.argmax(level > 0.12 * np.percentile(level, 95)))
    opens = next(k for k, o in enumerate(track.openings) if o > 0)
    assert opens - audible >= 5  # the s / sh (50 ms or more) shows as a shut mouth
    assert track.visemes[opens + 3] is (Viseme.I if word == "see" else Viseme.U)
