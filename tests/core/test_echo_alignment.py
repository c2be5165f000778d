"""The echo canceller's reference placed by when it plays, not by when it arrived."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from app.core.echo_alignment import ReferenceTimeline


def test_the_timeline_gives_silence_between_stretches_and_none_where_nothing_played() -> None:
    timeline = ReferenceTimeline()
    timeline.add(np.ones(160, dtype=np.float32), 16_000, 1.0)  # 1.00 .. 1.01 s
    timeline.add(np.full(160, 2.0, dtype=np.float32), 16_000, 1.02)  # 1.02 .. 1.03 s
    assert timeline.take(0.5, 160) is None
    got = timeline.take(1.005, 320)  # 1.005 .. 1.025 s
    assert got is not None
    assert np.all(got[:80] == 1.0) and np.all(got[80:240] == 0.0) and np.all(got[240:] == 2.0)
    rest = timeline.take(1.025, 160)
    assert rest is not None and np.all(rest[:80] == 2.0) and np.all(rest[80:] == 0.0)
    assert timeline.pending() == 0


def test_a_late_reference_is_dropped_not_replayed_later() -> None:
    timeline = ReferenceTimeline()
    assert timeline.take(2.0, 160) is None
    timeline.add(np.ones(160, dtype=np.float32), 16_000, 1.0)  # already past the capture
    assert timeline.take(2.01, 160) is None
    assert timeline.pending() == 0


@given(st.lists(st.integers(1, 500), min_size=1, max_size=30),
       st.lists(st.integers(1, 700), min_size=1, max_size=30))
def test_any_split_of_a_stream_comes_back_whole_in_any_split(
        played: list[int], captured: list[int]) -> None:
    """A contiguous stream added in blocks of any size (each block's start rounded as a
    resampled block's is) is taken back sample for sample in blocks of any size."""
    stream = np.arange(sum(played), dtype=np.float32) + 1.0
    timeline = ReferenceTimeline()
    at = 0
    for size in played:
        timeline.add(stream[at:at + size], 16_000, 3.0 + at / 16_000)
        at += size
    out: list[np.ndarray] = []
    taken = 0
    for size in [*captured, stream.size]:
        got = timeline.take(3.0 + taken / 16_000, size)
        out.append(np.zeros(size, np.float32) if got is None else got)
        taken += size
    joined = np.concatenate(out)
    assert np.array_equal(joined[:stream.size], stream)
    assert not np.any(joined[stream.size:])


def test_blocks_at_a_speakers_rate_tile_the_grid_without_drift() -> None:
    """22.05 kHz blocks of 220 samples are 159.64 samples at 16 kHz each: resampled to a
    rounded 160 and laid end to end, the reference ran 0.2 % slow (20 ms after 10 s, and
    the canceller lost the echo). On the grid, a tone stays where it was played."""
    rate, block = 22_050, 220
    seconds = 10.0
    t = np.arange(int(seconds * rate)) / rate
    tone = np.sin(2 * np.pi * 300 * t).astype(np.float32)
    timeline = ReferenceTimeline()
    for index in range(0, tone.size - block, block):
        timeline.add(tone[index:index + block], rate, 2.0 + index / rate)
    late = timeline.take(2.0 + 9.5, 1_600)  # 9.5 s in
    assert late is not None
    expected = np.sin(2 * np.pi * 300 * (9.5 + np.arange(1_600) / 16_000))
    assert float(np.sqrt(np.mean(np.square(late - expected)))) < 0.01
