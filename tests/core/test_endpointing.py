"""Endpointing decisions from scripted VAD probabilities (no audio models, no threads)."""

from __future__ import annotations

import numpy as np

from app.core.barge_in import BargeInConfig, BargeInPolicy
from app.core.endpointing import EndpointConfig, Endpointer, EndpointEvent
from app.core.events import SpeechPaused, SpeechResumed, SpeechStarted, UtteranceEnded

FRAME = 512  # 32 ms at 16 kHz


def feed(endpointer: Endpointer, probabilities: list[float]) -> list[tuple[int, EndpointEvent]]:
    """Feed one frame per probability; frames are filled with their index for tracing."""
    events = []
    for index, probability in enumerate(probabilities):
        frame = np.full(FRAME, float(index), dtype=np.float32)
        events += [(index, e) for e in endpointer.feed(frame, probability)]
    return events


def kinds(events: list[tuple[int, EndpointEvent]]) -> list[str]:
    return [type(e).__name__ for _, e in events]


def test_speech_then_silence_gives_start_pause_and_end() -> None:
    cfg = EndpointConfig(min_speech_ms=96, pause_ms=96, end_of_turn_ms=480)
    events = feed(Endpointer(cfg), [0.0] * 5 + [0.9] * 20 + [0.0] * 20)
    assert kinds(events) == ["SpeechStarted", "SpeechPaused", "UtteranceEnded"]
    started = events[0][1]
    assert isinstance(started, SpeechStarted)
    assert started.speech_start == 5 * FRAME / 16_000
    end_index, ended = events[2]
    assert isinstance(ended, UtteranceEnded)
    assert ended.speech_end == 25 * FRAME / 16_000
    # 480 ms of silence = 15 frames after the last voiced frame
    assert end_index == 24 + 15


def test_end_of_turn_audio_includes_pre_roll_and_the_whole_utterance() -> None:
    cfg = EndpointConfig(min_speech_ms=64, pre_roll_ms=96, end_of_turn_ms=192)
    events = feed(Endpointer(cfg), [0.0] * 10 + [0.9] * 6 + [0.0] * 10)
    ended = events[-1][1]
    assert isinstance(ended, UtteranceEnded)
    frame_ids = sorted(set(ended.audio.astype(int).tolist()))
    assert frame_ids[0] == 7  # three frames (96 ms) of pre-roll before frame 10
    assert 15 in frame_ids


def test_short_blip_is_not_speech() -> None:
    cfg = EndpointConfig(min_speech_ms=160)
    events = feed(Endpointer(cfg), [0.0] * 3 + [0.9, 0.9] + [0.0] * 30)
    assert events == []


def test_pause_then_resume_keeps_one_utterance() -> None:
    cfg = EndpointConfig(min_speech_ms=64, pause_ms=96, end_of_turn_ms=480)
    probabilities = [0.9] * 10 + [0.0] * 5 + [0.9] * 10 + [0.0] * 20
    events = feed(Endpointer(cfg), probabilities)
    assert kinds(events) == [
        "SpeechStarted",
        "SpeechPaused",
        "SpeechResumed",
        "SpeechPaused",
        "UtteranceEnded",
    ]
    paused = events[1][1]
    assert isinstance(paused, SpeechPaused)
    assert isinstance(events[2][1], SpeechResumed)
    ended = events[-1][1]
    assert isinstance(ended, UtteranceEnded)
    assert ended.speech_start == 0.0
    assert ended.speech_end == 25 * FRAME / 16_000


def test_hysteresis_keeps_speech_through_a_dip() -> None:
    cfg = EndpointConfig(threshold=0.5, hysteresis=0.15, min_speech_ms=64, pause_ms=64)
    events = feed(Endpointer(cfg), [0.9] * 5 + [0.4] * 5 + [0.9] * 5)
    assert kinds(events) == ["SpeechStarted"]


def test_barge_in_needs_longer_speech_while_assistant_speaks() -> None:
    cfg = EndpointConfig(min_speech_ms=96)
    bar = BargeInPolicy(BargeInConfig(speech_min_ms=288)).speech_bar
    quiet = Endpointer(cfg, over_reply=bar)
    assert kinds(feed(quiet, [0.9] * 4)) == ["SpeechStarted"]
    speaking = Endpointer(cfg, over_reply=bar)
    speaking.assistant_speaking = True
    assert feed(speaking, [0.9] * 4) == []
    assert kinds(feed(speaking, [0.9] * 6)) == ["SpeechStarted"]


def test_max_utterance_forces_an_end() -> None:
    cfg = EndpointConfig(min_speech_ms=64, max_utterance_s=1.0)
    events = feed(Endpointer(cfg), [0.9] * 40)
    assert "UtteranceEnded" in kinds(events)


def test_reset_forgets_speech_in_progress() -> None:
    endpointer = Endpointer(EndpointConfig(min_speech_ms=64))
    feed(endpointer, [0.9] * 5)
    assert endpointer.in_speech
    endpointer.reset()
    assert not endpointer.in_speech
    assert feed(endpointer, [0.0] * 30) == []


def test_end_now_ends_a_paused_turn_at_once() -> None:
    cfg = EndpointConfig(min_speech_ms=64, pause_ms=96, end_of_turn_ms=480)
    endpointer = Endpointer(cfg)
    events = feed(endpointer, [0.9] * 10 + [0.0] * 3)
    assert kinds(events)[-1] == "SpeechPaused"
    ended = endpointer.end_now()
    assert isinstance(ended, UtteranceEnded)
    assert ended.speech_end == 10 * FRAME / 16_000
    assert not endpointer.in_speech
    assert endpointer.end_now() is None  # nothing to end any more
    assert feed(endpointer, [0.0] * 30) == []


def _paused_and_told_to_wait_longer() -> Endpointer:
    """An endpointer 96 ms into a pause (320 ms usual end, 960 ms longer), told to wait longer."""
    cfg = EndpointConfig(
        min_speech_ms=64, pause_ms=96, end_of_turn_ms=320, unfinished_end_of_turn_ms=960
    )
    endpointer = Endpointer(cfg)
    feed(endpointer, [0.9] * 10 + [0.0] * 3)
    endpointer.wait_longer()
    return endpointer


def test_wait_usual_takes_back_the_longer_wait() -> None:
    endpointer = _paused_and_told_to_wait_longer()
    endpointer.wait_usual()
    events = feed(endpointer, [0.0] * 7)  # 3 + 7 frames = 320 ms
    assert kinds(events) == ["UtteranceEnded"]


def test_wait_longer_extends_only_the_current_pause() -> None:
    endpointer = _paused_and_told_to_wait_longer()
    events = feed(endpointer, [0.0] * 20)  # 3 + 20 frames = 736 ms < 960 ms
    assert events == []
    events = feed(endpointer, [0.0] * 10)
    assert kinds(events) == ["UtteranceEnded"]
    # the next utterance uses the normal end-of-turn silence again
    events = feed(endpointer, [0.9] * 10 + [0.0] * 10)
    assert kinds(events) == ["SpeechStarted", "SpeechPaused", "UtteranceEnded"]
