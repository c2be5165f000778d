"""The listener stage, called directly: turn detection at the pause, echo reference order."""

from __future__ import annotations

import numpy as np

from app.adapters.fakes import FakeTurnDetector, FakeVoiceActivity
from app.core.endpointing import EndpointConfig, Endpointer
from app.core.events import FloatAudio, PipelineEvent, UtteranceEnded
from app.core.listener import Listener, MicBlock, PlayedBlock, to_pipeline_rate
from app.core.playback import PlaybackQueue

CFG = EndpointConfig(
    min_speech_ms=64, pause_ms=96, end_of_turn_ms=480, unfinished_end_of_turn_ms=960
)


def loud(seconds: float) -> FloatAudio:
    return np.full(int(seconds * 16_000), 0.3, dtype=np.float32)


def quiet(seconds: float) -> FloatAudio:
    return np.zeros(int(seconds * 16_000), dtype=np.float32)


def listen(blocks: list[object], **kwargs: object) -> list[PipelineEvent]:
    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback, **kwargs)  # type: ignore[arg-type]
    for block in blocks:
        listener.handle(block)
    return events


def end_times(events: list[PipelineEvent]) -> list[float]:
    return [e.at for e in events if isinstance(e, UtteranceEnded)]


def test_confident_turn_detector_ends_the_turn_at_the_first_pause() -> None:
    blocks = [MicBlock(loud(1.0)), MicBlock(quiet(1.0))]
    detector = FakeTurnDetector(0.9)
    [ended_at] = end_times(listen(blocks, turn_detector=detector))
    assert detector.calls == 1
    assert ended_at < 1.0 + 0.2  # pause (96 ms) instead of 480 ms


def test_unfinished_sounding_user_gets_more_time() -> None:
    blocks = [MicBlock(loud(1.0)), MicBlock(quiet(1.5))]
    [ended_at] = end_times(listen(blocks, turn_detector=FakeTurnDetector(0.1)))
    assert ended_at > 1.0 + 0.9


def test_without_a_detector_the_silence_rule_applies() -> None:
    blocks = [MicBlock(loud(1.0)), MicBlock(quiet(1.0))]
    [ended_at] = end_times(listen(blocks))
    assert 1.0 + 0.45 < ended_at < 1.0 + 0.55


class RecordingEcho:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def add_reference(self, played: FloatAudio) -> None:
        self.calls.append(("reference", played.size))

    def process(self, captured: FloatAudio) -> FloatAudio:
        self.calls.append(("capture", captured.size))
        return captured

    def reset(self) -> None:
        return None


def test_echo_canceller_sees_reference_and_capture_in_arrival_order() -> None:
    echo = RecordingEcho()
    listen(
        [
            PlayedBlock(np.zeros(220, dtype=np.float32), 22_050),
            MicBlock(quiet(0.032)),
            PlayedBlock(quiet(0.02), 16_000),
        ],
        echo=echo,
    )
    assert echo.calls == [("reference", 160), ("capture", 512), ("reference", 320)]


def test_reference_resampling_keeps_duration() -> None:
    tone = np.sin(np.arange(24_000) / 24_000 * 2 * np.pi * 200).astype(np.float32)
    out = to_pipeline_rate(tone, 24_000)
    assert out.size == 16_000
    assert abs(float(np.max(out)) - 1.0) < 0.01


# ---- the end-of-turn call from the words (speculative turns) ---------------------------


def _pause_at(events: list[PipelineEvent]) -> float:
    from app.core.events import SpeechPaused

    return next(e.at for e in events if isinstance(e, SpeechPaused))


def test_deferring_listener_reports_the_score_and_leaves_the_call_to_the_words() -> None:
    from app.core.events import EndOfTurnScore
    from app.core.turn import JudgeEndOfTurn

    events: list[PipelineEvent] = []
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG),
                        PlaybackQueue(16_000, events.append),
                        turn_detector=FakeTurnDetector(0.9), defer_to_transcript=True)
    listener.handle(MicBlock(loud(1.0)))
    listener.handle(MicBlock(quiet(0.2)))
    assert [e.probability for e in events if isinstance(e, EndOfTurnScore)] == [0.9]
    assert end_times(events) == []  # sure-sounding, but the words are not in yet
    listener.handle(JudgeEndOfTurn(pause_at=_pause_at(events), end_now=True))
    [ended_at] = end_times(events)
    assert ended_at < 1.0 + 0.25


def test_a_call_for_an_old_pause_is_ignored_and_unfinished_words_wait() -> None:
    from app.core.turn import JudgeEndOfTurn

    events: list[PipelineEvent] = []
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG),
                        PlaybackQueue(16_000, events.append),
                        turn_detector=FakeTurnDetector(0.9), defer_to_transcript=True)
    listener.handle(MicBlock(loud(1.0)))
    listener.handle(MicBlock(quiet(0.2)))
    listener.handle(JudgeEndOfTurn(pause_at=0.5, end_now=True))  # not this pause
    assert end_times(events) == []
    listener.handle(JudgeEndOfTurn(pause_at=_pause_at(events), end_now=False))
    listener.handle(MicBlock(quiet(1.0)))
    [ended_at] = end_times(events)
    assert ended_at > 1.0 + 0.9  # the longer wait, although the audio model was sure
