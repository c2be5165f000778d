"""The playback queue: holding, flushing within a block, heard-text accounting."""

from __future__ import annotations

import numpy as np

from app.core.events import PipelineEvent, PlaybackEnded, PlaybackStarted
from app.core.playback import PlaybackQueue, heard_part
from app.core.telemetry import PlaybackLevel

RATE = 1000


def make() -> tuple[PlaybackQueue, list[PipelineEvent]]:
    events: list[PipelineEvent] = []
    return PlaybackQueue(RATE, events.append), events


def tone(n: int) -> np.ndarray:
    return np.full(n, 0.5, dtype=np.float32)


def test_held_turn_plays_nothing_until_released() -> None:
    queue, events = make()
    queue.begin(1, held=True)
    queue.enqueue(1, tone(100), "Hello there.")
    assert not queue.pull(50).any()
    queue.release(1)
    out = queue.pull(50)
    assert out.all()
    assert isinstance(events[-2], PlaybackStarted) or any(
        isinstance(e, PlaybackStarted) for e in events
    )


def test_finished_turn_reports_the_whole_text_heard() -> None:
    queue, events = make()
    queue.begin(1, held=False)
    queue.enqueue(1, tone(30), "One.")
    queue.enqueue(1, tone(30), "Two.")
    queue.finish(1)
    out = queue.pull(100)
    assert out[:60].all() and not out[60:].any()
    ended = [e for e in events if isinstance(e, PlaybackEnded)]
    assert ended == [PlaybackEnded(1, "One. Two.", False, ended[0].at, played_s=60 / RATE)]
    assert queue.idle()


def test_interrupted_turn_reports_how_long_it_played() -> None:
    queue, events = make()
    queue.begin(1, held=False)
    queue.enqueue(1, tone(80), "One two three four.")
    queue.pull(20)
    queue.pull(20)
    queue.cancel(1)
    (ended,) = [e for e in events if isinstance(e, PlaybackEnded)]
    assert ended.interrupted and ended.played_s == 40 / RATE


def test_cancel_stops_at_the_next_pull_and_reports_the_heard_part() -> None:
    queue, events = make()
    queue.begin(1, held=False)
    queue.enqueue(1, tone(40), "First sentence.")
    queue.enqueue(1, tone(100), "one two three four five six seven eight nine ten")
    queue.pull(40 + 50)  # first chunk and half of the second
    queue.cancel(1)
    assert not queue.pull(20).any()
    ended = next(e for e in events if isinstance(e, PlaybackEnded))
    assert ended.interrupted
    assert ended.heard_text == "First sentence. one two three four five"


def test_levels_follow_the_audio() -> None:
    queue, events = make()
    queue.begin(1, held=False)
    queue.enqueue(1, tone(200), "Hi.")
    for _ in range(12):  # 200 samples of audio, then silence
        queue.pull(20)
    levels = [e.level for e in events if isinstance(e, PlaybackLevel)]
    assert levels and max(levels) > 0.4
    assert levels[-1] == 0.0


def test_heard_part_rounds_to_words() -> None:
    assert heard_part("a b c d", 0.0) == ""
    assert heard_part("a b c d", 0.5) == "a b"
    assert heard_part("a b c d", 1.0) == "a b c d"


def test_paused_reply_keeps_its_place_and_a_cancel_counts_only_what_played() -> None:
    queue, events = make()
    queue.begin(1, held=False)
    queue.enqueue(1, tone(100), "One two three four.")
    assert queue.pull(20).all()
    queue.pause()
    assert not queue.pull(50).any() and not queue.speaking
    queue.resume()
    assert queue.pull(30).all()  # on from where it stopped, nothing skipped
    queue.pause()
    queue.pull(20)
    queue.cancel(1)
    (ended,) = [e for e in events if isinstance(e, PlaybackEnded)]
    assert ended.played_s == 50 / RATE and ended.heard_text == "One two"
    assert not queue.paused  # the pause ended with the reply it held


def test_heard_japanese_chunks_are_one_text_without_spaces() -> None:
    """The gate cuts 「四秒のタイマーを」 from 「セットしました。」; what the user heard,
    and what the history keeps, is one sentence (a space there would be in the next prompt)."""
    queue, events = make()
    queue.begin(1, held=False)
    for text in ("四秒のタイマーを", "セットしました。", "Okay.", "じゃあね。"):
        queue.enqueue(1, tone(20), text)
    queue.finish(1)
    for _ in range(6):
        queue.pull(20)
    ended = next(e for e in events if isinstance(e, PlaybackEnded))
    assert ended.heard_text == "四秒のタイマーをセットしました。 Okay. じゃあね。"
