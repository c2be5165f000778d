"""The window's side of timers and reminders: View → Timers and reminders (Ctrl+T), and a
ring shown as it is said.

Each ring adds a notice with its time ("18:05 Your pasta timer is done.": two rings with
the same words are two notices). While the microphone is muted the pipeline shows the
line it would have said as an ``EngineNotice``; the ring's own notice already says it,
so that copy is not added again. With the window hidden (in the tray, or the desktop pet
instead) the tray icon also shows it as a message.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QSystemTrayIcon

from app.storage.reminders import ReminderStore
from app.storage.tool_desk import Rang
from app.ui import timer_text
from app.ui.timers_dialog import ReminderList, TimersDialog

if TYPE_CHECKING:
    from app.ui.window import MainWindow

TRAY_MESSAGE_MS = 15_000
RINGS_REMEMBERED = 16
"""Ring lines whose muted copy (an ``EngineNotice``) is still to come."""


class WindowTimers:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.desk: Callable[[], ReminderList | None] = lambda: None
        """The running engines' ``ToolDesk`` (``run_app`` sets it: None while none runs)."""
        self.dialog: TimersDialog | None = None
        self.action = QAction("&Timers and reminders…", window)
        self.action.setShortcut(QKeySequence("Ctrl+T"))
        self.action.triggered.connect(self.open)
        self._store: ReminderStore | None = None
        self._rung: deque[str] = deque(maxlen=RINGS_REMEMBERED)

    def source(self) -> ReminderList | None:
        """The running desk (its lock orders cancels with rings); while engines load or
        restart, the same table read directly; None when nothing is kept."""
        desk = self.desk()
        if desk is not None:
            return desk
        conversations = self.window.conversations
        if conversations is None:
            return None
        if self._store is None:
            self._store = ReminderStore(conversations.keeper.db)
        return self._store

    def open(self) -> TimersDialog:
        if self.dialog is None:
            self.dialog = TimersDialog(self.source, self.window)
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog

    def rang(self, ring: Rang) -> None:
        """A timer or reminder came due (GUI thread, through the bridge)."""
        at = datetime.fromtimestamp(ring.reminder.due_at).astimezone()
        self.window.notices.add(f"{at:%H:%M} {ring.text}", once=False)
        self._rung.append(" ".join(ring.text.split()))
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.refresh()
        tray = self.window.closing.tray
        if (tray is not None and tray.isVisible() and QSystemTrayIcon.supportsMessages()
                and (not self.window.isVisible() or self.window.isMinimized())):
            tray.showMessage(timer_text.kind_word(ring.reminder), ring.text,
                             QSystemTrayIcon.MessageIcon.Information, TRAY_MESSAGE_MS)

    def already_shown(self, message: str) -> bool:
        """Whether a muted announcement is a ring's line already shown (once per ring)."""
        message = " ".join(message.split())
        if message in self._rung:
            self._rung.remove(message)
            return True
        return False
