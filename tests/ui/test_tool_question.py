"""The window asks too: a tool that changes something and waits for the user's yes shows
a box with Allow, Always allow and Don't. A click settles it (the call runs, or is
dropped); a yes said aloud settles it too, and the box closes by itself."""

from __future__ import annotations

import threading

from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.storage.history import Database
from app.storage.notes import NoteStore
from app.storage.reminders import ReminderStore
from app.storage.tool_desk import ToolDesk
from app.tools.builtin import builtin_registry
from app.tools.confirmation import PendingCall
from app.tools.spec import ToolCall
from app.ui.window import MainWindow
from tests.tools.test_confirmation import AskFor, Calendar


def _desk(window: MainWindow) -> tuple[ToolDesk, Calendar, AskFor, list[str]]:
    db = Database(None)
    reminders = ReminderStore(db)
    desk = ToolDesk(builtin_registry(reminders, NoteStore(db)), reminders)
    calendar, confirms = Calendar(), AskFor(Calendar.spec.name)
    desk.set_extra_tools([calendar], confirms)
    said: list[str] = []
    desk._say = said.append

    def ask(pending: PendingCall) -> None:  # the bridge's hop, done here on this thread
        window.alerts.route(pending)

    desk.on_question = ask
    window.alerts.questions.desk = lambda: desk
    return desk, calendar, confirms, said


def _button(box: QMessageBox, text: str) -> object:
    [button] = [b for b in box.buttons() if b.text() == text]
    return button


def test_always_allow_in_the_window_runs_the_call(qtbot: QtBot, window: MainWindow) -> None:
    desk, calendar, confirms, said = _desk(window)
    desk.run_call(ToolCall(Calendar.spec.name, {"title": "Dentist"}), threading.Event())
    box = window.alerts.questions.box
    assert box is not None and box.isVisible()
    assert "add event (calendar)" in box.text() and "Dentist" in box.text()
    assert window.persona.name in box.text()
    _button(box, "Always allow").click()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: calendar.events == ["Dentist"] and bool(said), timeout=5000)
    assert said == ["Dentist is in your calendar."]
    assert confirms.always == {Calendar.spec.name}
    qtbot.waitUntil(lambda: window.alerts.questions.box is None, timeout=3000)


def test_dont_drops_it_and_a_spoken_yes_closes_the_box(qtbot: QtBot,
                                                        window: MainWindow) -> None:
    desk, calendar, _, _ = _desk(window)
    desk.run_call(ToolCall(Calendar.spec.name, {"title": "Gym"}), threading.Event())
    box = window.alerts.questions.box
    assert box is not None
    _button(box, "Don't").click()  # type: ignore[attr-defined]
    assert desk.permissions.pending is None and calendar.events == []
    desk.run_call(ToolCall(Calendar.spec.name, {"title": "Yoga"}), threading.Event())
    assert window.alerts.questions.box is not None
    assert desk.reply(4, "Yes.", "en") is None  # said aloud: the model calls again
    qtbot.waitUntil(lambda: window.alerts.questions.box is None, timeout=3000)
    assert desk.run_call(ToolCall(Calendar.spec.name, {"title": "Yoga"}),
                         threading.Event()).ok
    assert calendar.events == ["Yoga"]
