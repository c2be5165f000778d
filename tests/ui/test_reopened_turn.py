"""A turn whose words were carried into the next one disappears from the transcript."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.core.events import Transcript, TurnCancelled, TurnConfirmed
from app.core.turn_commands import REOPENED
from app.ui.window import MainWindow


def test_reopened_fragment_leaves_the_transcript(qtbot: QtBot, window: MainWindow) -> None:
    post = window.bridge.post
    post(TurnConfirmed(1, 1.3, 0.2, 1.14))
    post(Transcript(1, "Tell me a long story about a dragon", 1.5))
    window.bridge.drain()
    assert window.transcript.user_text(1) == "Tell me a long story about a dragon"
    post(TurnCancelled(1, 1.6, REOPENED))
    post(TurnConfirmed(2, 3.0, 0.2, 2.8))
    post(Transcript(2, "Tell me a long story about a dragon who learns to bake bread", 3.2))
    window.bridge.drain()
    assert window.transcript.user_text(1) == ""
    assert 1 not in window.transcript.model.turns
    assert window.transcript.user_text(2).endswith("who learns to bake bread")


def test_a_barged_in_turn_stays(qtbot: QtBot, window: MainWindow) -> None:
    post = window.bridge.post
    post(TurnConfirmed(1, 1.3, 0.2, 1.14))
    post(Transcript(1, "Tell me a story", 1.5))
    post(TurnCancelled(1, 2.6, "barge-in"))
    window.bridge.drain()
    assert window.transcript.user_text(1) == "Tell me a story"
