"""An evening of talk does not grow the window without end: the transcript keeps the last
turns on screen (History keeps them all)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.ui.transcript import MAX_ROWS, TranscriptView
from app.ui.transcript_model import TurnEntry


def test_the_transcript_shows_the_last_turns(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    for turn_id in range(1, MAX_ROWS + 51):
        entry = TurnEntry(turn_id, user=f"question {turn_id}", confirmed=True)
        view.model.turns[turn_id] = entry
        view.refresh(entry)
    assert len(view.model.turns) == MAX_ROWS
    assert view.user_text(50) == ""
    assert view.user_text(MAX_ROWS + 50) == f"question {MAX_ROWS + 50}"
