"""``bench lipsync``'s scoring: onsets after a quiet stretch, one-to-one pairing (a
syllable the mouth did not show is left out, not matched to its neighbour), the sign of
the offset, and syllables found in the vowel band rather than in a hiss."""

from __future__ import annotations

import numpy as np
import pytest

from bench.lipsync import _offsets, _onsets, audio_onsets, pair

RATE = 16_000


def test_onsets_need_a_quiet_stretch_before_them() -> None:
    times = np.arange(0, 1.0, 0.01)
    values = np.zeros_like(times)
    values[20:40] = 1.0  # onset at 0.2
    values[43:60] = 1.0  # a 30 ms dip: the same syllable (a frame shut: a new one)
    values[70:90] = 1.0  # 100 ms gap: a new onset at 0.7
    assert _onsets(times, values, 0.25, 0.1) == pytest.approx([0.2, 0.7])
    assert _onsets(times, values, 0.25, 0.1, quiet_s=0.02) == pytest.approx([0.2, 0.43, 0.7])


def test_pairs_are_one_to_one_and_sound_minus_mouth() -> None:
    sound = [1.00, 1.30, 2.00]
    mouth = [0.98, 2.05]  # the mouth showed no second syllable
    paired = pair(sound, mouth)
    assert sorted(round(o, 3) for _, o in paired) == [-0.05, 0.02]
    scored = _offsets([o for _, o in paired])
    assert scored["paired"] == 2 and scored["within_tolerance"] == 1  # -50 ms: sound early
    assert pair([1.0], [1.5]) == []  # too far apart to be the same syllable


def test_a_hiss_is_not_a_syllable_onset_its_vowel_is() -> None:
    rng = np.random.default_rng(1)
    hiss = (0.3 * rng.standard_normal(int(0.15 * RATE))).astype(np.float32)
    hiss = np.fft.irfft(np.fft.rfft(hiss) * (np.fft.rfftfreq(hiss.size, 1 / RATE) > 4000),
                        n=hiss.size).astype(np.float32)
    t = np.arange(int(0.3 * RATE)) / RATE
    vowel = (0.3 * np.sin(2 * np.pi * 600 * t)).astype(np.float32)
    audio = np.concatenate([np.zeros(RATE // 5, np.float32), hiss, vowel,
                            np.zeros(RATE // 5, np.float32)])
    blocks = [(10.0 + k / RATE, audio[k:k + 320]) for k in range(0, audio.size, 320)]
    [onset] = audio_onsets(blocks, RATE)
    assert abs(onset - (10.0 + 0.2 + 0.15)) <= 0.01
