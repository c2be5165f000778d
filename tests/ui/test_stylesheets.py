"""Every stylesheet the app sets parses: Qt only warns (once per widget) and draws unstyled."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QtMsgType, qInstallMessageHandler
from pytestqt.qtbot import QtBot

from app.ui.window import MainWindow


@pytest.fixture
def qt_warnings() -> Iterator[list[str]]:
    seen: list[str] = []

    def handler(kind: QtMsgType, _context: object, message: str) -> None:
        if kind != QtMsgType.QtDebugMsg:
            seen.append(message)

    previous = qInstallMessageHandler(handler)
    yield seen
    qInstallMessageHandler(previous)


def test_transcript_bubbles_and_window_style_without_parse_errors(
    qtbot: QtBot, window: MainWindow, qt_warnings: list[str]
) -> None:
    from app.core.events import PlaybackEnded, Transcript, TurnConfirmed

    post = window.bridge.post
    post(TurnConfirmed(1, 1.0, 0.2, 0.9))
    post(Transcript(1, "Hello there", 1.1))
    post(PlaybackEnded(1, "Hi! How are you?", False, 2.0))
    window.bridge.drain()
    qtbot.wait(50)
    assert window.transcript.user_text(1) == "Hello there"
    assert not [w for w in qt_warnings if "stylesheet" in w.lower()], qt_warnings
