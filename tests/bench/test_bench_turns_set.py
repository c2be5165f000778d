"""The turn-taking benchmark's labelled set covers what the issue asks for."""

from __future__ import annotations

from bench.turns import GAPS, cases


def test_forty_requests_in_four_voices_with_pauses_from_120_to_900_ms() -> None:
    made = cases(40)
    assert len(made) == 40
    assert len({c.voice for c in made}) >= 4
    paused = [c for c in made if c.gap_s]
    assert len(paused) == 20 and {c.gap_s for c in paused} == set(GAPS)
    assert min(GAPS) == 0.12 and max(GAPS) == 0.9
    assert all(len(c.parts) == 2 for c in paused)
    assert all(len(c.parts) == 1 for c in made if not c.gap_s)
