"""What grows with every turn is bounded in the app: the HUD's timelines, the transcript."""

from __future__ import annotations

from app.core.events import TurnStarted
from app.core.metrics import TimelineRecorder
from app.storage.settings import Settings, pipeline_config


def test_the_apps_recorder_keeps_the_last_turns_and_run_keeps_all() -> None:
    kept = TimelineRecorder(keep=64)
    everything = TimelineRecorder()
    for turn_id in range(1, 1_001):
        event = TurnStarted(turn_id, float(turn_id), float(turn_id), float(turn_id), False)
        kept.observe(event)
        everything.observe(event)
    assert sorted(kept.turns) == list(range(937, 1_001))
    assert len(everything.turns) == 1_000
    assert pipeline_config(Settings()).timelines_kept == 64

