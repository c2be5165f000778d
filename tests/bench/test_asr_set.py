"""The labelled set behind ``hanasu bench asr``: what it covers, and noise at the SNR asked."""

from __future__ import annotations

import numpy as np
import pytest

from bench.asr_speech import add_noise, plan, set_key


def test_set_has_60_plus_utterances_in_several_voices_clean_and_noisy() -> None:
    rows = plan()
    assert len(rows) >= 60
    voices = {voice for _, _, voice, _ in rows}
    assert len(voices) >= 5 and any(engine == "piper" for engine, _, _ in voices)
    assert len({wpm for engine, _, wpm in voices if engine == "espeak"}) >= 3  # speeds
    noises = [kind for _, _, _, (kind, _) in rows]
    assert noises.count("none") >= 20 and {"white", "pink"} <= set(noises)
    assert len({name for name, _, _, _ in rows}) == len(rows)


@pytest.mark.parametrize(("kind", "snr_db"), [("white", 10.0), ("white", 20.0), ("pink", 15.0)])
def test_noise_is_added_at_the_requested_snr(kind: str, snr_db: float) -> None:
    t = np.arange(32_000) / 16_000
    speech = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    noisy = add_noise(speech, kind, snr_db, seed=1)
    noise = noisy - speech
    measured = 10 * np.log10(np.mean(speech**2) / np.mean(noise**2))
    assert measured == pytest.approx(snr_db, abs=0.3)
    assert np.array_equal(noisy, add_noise(speech, kind, snr_db, seed=1))  # reproducible


def test_pink_noise_has_more_low_than_high_frequency_power() -> None:
    speech = np.full(32_000, 0.2, np.float32)
    spectrum = np.abs(np.fft.rfft(add_noise(speech, "pink", 10.0, seed=2) - speech)) ** 2
    low, high = spectrum[10:1_000].mean(), spectrum[10_000:15_000].mean()
    assert low > 5 * high


def test_clean_is_untouched_and_the_cache_key_is_stable() -> None:
    speech = np.ones(10, np.float32)
    assert add_noise(speech, "none", 0.0, seed=0) is speech
    assert set_key() == set_key() and len(set_key()) == 16
