"""``hanasu bench`` with acknowledgements: voice-to-voice is to the first answer word, the
first sound is reported apart, and acknowledged turns are counted."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.events import (
    Acknowledged,
    AnswerStarted,
    PlaybackStarted,
    SpeechAudio,
    TurnStarted,
)
from app.core.metrics import TimelineRecorder, TurnTimeline
from bench.latency import _report, answer_delay_s


def _timeline(*events: object) -> TurnTimeline:
    recorder = TimelineRecorder()
    recorder.observe(TurnStarted(1, at=0.2, speech_start=0.0, speech_end=0.0, speculative=False))
    for event in events:
        recorder.observe(event)  # type: ignore[arg-type]
    return recorder.turns[1]


def _chunk(at: float) -> SpeechAudio:
    return SpeechAudio(1, 0, "Paris.", np.zeros(1000, np.float32), 1000, at)


def test_the_answer_after_an_acknowledgement_counts_from_its_own_first_sample() -> None:
    turn = _timeline(
        Acknowledged(1, "Hmm,", 1.2),
        PlaybackStarted(1, 1.21),
        _chunk(1.4),
        AnswerStarted(1, 1.55),
        SpeechAudio(1, 1, "More.", np.zeros(1000, np.float32), 1000, 1.6),
    )
    assert answer_delay_s(turn) == pytest.approx(0.34)
    assert turn.voice_to_first_sound == pytest.approx(1.21)
    assert turn.voice_to_voice == pytest.approx(1.55)
    assert turn.playback_gaps() == [0.0]  # the answer's chunks from the answer's start
    data = turn.as_dict()
    assert data["first_sound"] == pytest.approx(1.21)
    assert data["first_answer_word"] == pytest.approx(1.55)
    assert data["acknowledgement"] == "Hmm,"


def test_without_an_acknowledgement_nothing_is_added() -> None:
    turn = _timeline(_chunk(0.6), PlaybackStarted(1, 0.61))
    assert answer_delay_s(turn) == 0.0
    assert answer_delay_s(None) == 0.0
    assert turn.voice_to_voice == turn.voice_to_first_sound == pytest.approx(0.61)


def test_report_counts_acknowledged_turns_and_both_times() -> None:
    rows: list[dict[str, object]] = [
        {"voice_to_voice": 1.6, "first_sound": 1.2, "acknowledgement": "Hmm,", "stages": {}},
        {"voice_to_voice": 0.7, "first_sound": 0.7, "acknowledgement": "", "stages": {}},
        {"voice_to_voice": 0.8, "first_sound": 0.8, "acknowledgement": "", "stages": {}},
    ]
    summary = _report(rows)["summary"]
    assert isinstance(summary, dict)
    assert summary["acknowledged_turns"] == 1
    assert summary["voice_to_voice_s"]["p99"] == 1.6
    assert summary["first_sound_s"]["p99"] == 1.2
