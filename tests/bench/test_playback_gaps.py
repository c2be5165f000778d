"""Gaps the speaker waits between chunks of one reply, from the timeline's events."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.events import PlaybackStarted, SpeechAudio, TurnStarted
from app.core.metrics import TimelineRecorder, TurnTimeline


def _chunk(index: int, at: float, seconds: float, rate: int = 1_000) -> SpeechAudio:
    samples = np.zeros(int(seconds * rate), np.float32)
    return SpeechAudio(turn_id=1, index=index, text="x", samples=samples, sample_rate=rate, at=at)


def _timeline(*events: object) -> TurnTimeline:
    recorder = TimelineRecorder()
    started = TurnStarted(turn_id=1, at=0.0, speech_start=0.0, speech_end=0.0, speculative=False)
    recorder.observe(started)
    for event in events:
        recorder.observe(event)  # type: ignore[arg-type]
    return recorder.turns[1]


def test_chunks_ready_before_the_last_one_ends_leave_no_gap() -> None:
    turn = _timeline(
        _chunk(0, 1.0, 2.0),
        PlaybackStarted(turn_id=1, at=1.1),
        _chunk(1, 1.5, 1.0),
        _chunk(2, 3.0, 1.0),
    )
    assert turn.chunk_audio == [(1.0, 2.0), (1.5, 1.0), (3.0, 1.0)]
    assert turn.playback_gaps() == [0.0, 0.0]


def test_a_late_chunk_is_a_gap_and_shifts_what_follows() -> None:
    turn = _timeline(
        _chunk(0, 1.0, 1.0),
        PlaybackStarted(turn_id=1, at=1.0),
        _chunk(1, 2.3, 1.0),
        _chunk(2, 3.0, 0.5),
    )
    gaps = turn.playback_gaps()
    assert gaps[0] == pytest.approx(0.3)  # played until 2.0, next arrived at 2.3
    assert gaps[1] == 0.0  # chunk 1 plays 2.3-3.3; chunk 2 was already waiting
    assert turn.tts_first_audio == 1.0
    assert turn.as_dict()["playback_gaps"] == gaps


def test_nothing_played_means_no_gaps() -> None:
    assert _timeline(_chunk(0, 1.0, 1.0)).playback_gaps() == []
