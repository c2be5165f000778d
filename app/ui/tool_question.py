"""The window's side of "Shall I...?": a tool that changes something waits for the user's
yes, and the window asks too, with Allow, Always allow and Don't. Whichever answers first
(a click here, or a yes or no said aloud) settles it; the box closes by itself once the
question is settled or has gone stale."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox

from app.tools.confirmation import PendingCall

if TYPE_CHECKING:
    from app.storage.tool_desk import ToolDesk
    from app.ui.window import MainWindow

SETTLED_POLL_MS = 500


def describe(pending: PendingCall) -> str:
    """``calendar__add_event`` with its arguments, as a person reads it: "add event
    (calendar): title Dentist, day Tuesday"."""
    server, _, tool = pending.call.name.rpartition("__")
    what = tool.replace("_", " ") + (f" ({server})" if server else "")
    parts = [f"{key.replace('_', ' ')} "
             + (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                                default=str))
             for key, value in pending.call.arguments.items()]
    arguments = ", ".join(parts)
    if len(arguments) > 200:
        arguments = arguments[:199] + "…"
    return f"{what}: {arguments}" if arguments else what


class ToolQuestions:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.desk: Callable[[], ToolDesk | None] = lambda: None
        """The running engines' desk (``run_app`` sets it)."""
        self.box: QMessageBox | None = None
        self._asked: PendingCall | None = None
        self._timer = QTimer(window)
        self._timer.setInterval(SETTLED_POLL_MS)
        self._timer.timeout.connect(self._close_if_settled)

    def ask(self, pending: PendingCall) -> None:
        """A call waits (GUI thread, through the bridge): ask, replacing an older box."""
        self._close()
        self._asked = pending
        box = QMessageBox(QMessageBox.Icon.Question, "Allow this tool?",
                          f"{self.window.persona.name} wants to use "
                          f"{describe(pending)}.\n\nYou can also say yes or no.",
                          parent=self.window)
        box.setObjectName("toolQuestion")
        allow = box.addButton("Allow", QMessageBox.ButtonRole.AcceptRole)
        always = box.addButton("Always allow", QMessageBox.ButtonRole.YesRole)
        box.addButton("Don't", QMessageBox.ButtonRole.RejectRole)
        box.buttonClicked.connect(
            lambda button: self._answered(pending, button is allow or button is always,
                                          button is always))
        self.box = box
        box.open()
        self._timer.start()

    def _answered(self, pending: PendingCall, allowed: bool, always: bool) -> None:
        desk = self.desk()
        if desk is not None:
            if allowed:
                desk.allow(pending.call.call_id, always)
            else:
                desk.deny(pending.call.call_id)
        self._close()

    def _close_if_settled(self) -> None:
        desk = self.desk()
        if desk is None or self._asked is None:
            self._close()
            return
        waiting = desk.permissions.pending
        if waiting is None or waiting.call is not self._asked.call \
                or waiting.stale(desk.permissions.now()):
            self._close()

    def _close(self) -> None:
        self._timer.stop()
        self._asked = None
        if self.box is not None:
            self.box.done(0)
            self.box.deleteLater()
            self.box = None
