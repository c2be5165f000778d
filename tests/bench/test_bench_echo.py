"""The echo bench's scoring: what is left after the canceller, from the reply on."""

from __future__ import annotations

import numpy as np

from bench.echo import AUDIBLE, RATE, WINDOW, residual_report


def test_the_residual_is_scored_from_the_reply_on_and_loud_windows_are_counted() -> None:
    seconds = 2.0
    t = np.arange(int(seconds * RATE)) / RATE
    heard = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)  # the room's echo
    left = (heard * 0.001).astype(np.float32)  # -60 dB after the canceller
    left[RATE + 3 * WINDOW:RATE + 4 * WINDOW] = 0.05  # one burst it let through
    delay = 100
    processed = np.concatenate([np.zeros(delay, np.float32), left])
    before = np.zeros(RATE, np.float32)
    before[:] = 0.2  # loud, but before the reply started: not scored
    report = residual_report(heard, np.concatenate([np.zeros(delay, np.float32),
                                                    before, left[RATE:]]), delay, 1.0)
    assert report["audible_windows"] == 1
    assert report["residual_rms_max"] > AUDIBLE
    assert report["erle_db_p50"] > 50
    clean = residual_report(heard, processed, delay, 0.0)
    assert clean["windows"] == int(seconds * RATE) // WINDOW
