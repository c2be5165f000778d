"""The timers and reminders still to ring, soonest first, each with a Cancel button.

Set by voice ("set a timer for five minutes", "remind me at six to call mum"), listed
here. While shown, the list is read again every second (a tiny local SQLite read on the
GUI thread): countdowns move, a timer set by voice meanwhile appears, one that rang goes.
Hidden, it does no work. A database that cannot be read is said in one line.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.storage.faults import reason
from app.storage.history import SaveFailed
from app.tools.clock import Now, local_now
from app.tools.records import Reminder
from app.ui import icons, keyboard, theme, timer_text
from app.ui.plain import plain

log = logging.getLogger(__name__)

REFRESH_MS = 1000
EMPTY_TEXT = ("No timers or reminders. Say “set a timer for five minutes” or "
              "“remind me at six to call mum”.")
_ROW_STYLE = f"""
QFrame#timerRow {{ background: {theme.CARD}; border: 1px solid {theme.BORDER};
    border-radius: 12px; }}
QFrame#timerRow QLabel#timerWhen {{ font-weight: 600; }}
QFrame#timerRow QLabel#timerKind {{ color: {theme.MUTED_TEXT}; }}
"""


class ReminderList(Protocol):
    """What the dialog reads and cancels through: the running ``ToolDesk``, or a
    ``ReminderStore`` while no engines run."""

    def pending(self) -> list[Reminder]: ...

    def cancel(self, reminder_id: int) -> bool: ...


Source = Callable[[], "ReminderList | None"]


class TimerRow(QFrame):
    """One timer or reminder: icon, kind, what it is, when it rings, Cancel."""

    def __init__(self, reminder: Reminder, on_cancel: Callable[[int], None]) -> None:
        super().__init__()
        self.reminder = reminder
        self.setObjectName("timerRow")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        layout.setSpacing(10)
        timer = reminder.kind == "timer"
        icon = QLabel()
        icon.setPixmap((icons.timer_icon() if timer else icons.bell_icon()).pixmap(20, 20))
        layout.addWidget(icon)
        self.kind = QLabel(timer_text.kind_word(reminder))
        self.kind.setObjectName("timerKind")
        self.kind.setMinimumWidth(64)
        layout.addWidget(self.kind)
        self.label = plain(QLabel(timer_text.title(reminder)))  # the user's own words
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.when = QLabel()
        self.when.setObjectName("timerWhen")
        self.when.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.when.setMinimumWidth(120)
        layout.addWidget(self.when)
        self.cancel = QPushButton("Cancel")
        self.cancel.setAccessibleName(f"Cancel the {timer_text.kind_word(reminder).lower()} "
                                      f"{timer_text.title(reminder)}")
        self.cancel.clicked.connect(lambda: on_cancel(reminder.id))
        layout.addWidget(self.cancel)

    def show_time(self, now_text: str, tooltip: str) -> None:
        if self.when.text() != now_text:
            self.when.setText(now_text)
        self.when.setToolTip(tooltip)


class TimersDialog(QDialog):
    def __init__(self, source: Source, parent: QWidget | None = None,
                 now: Now = local_now) -> None:
        super().__init__(parent)
        self.setWindowTitle("Timers and reminders")
        self.resize(560, 380)
        self.setStyleSheet(_ROW_STYLE)
        self.source = source
        self._now = now
        self.rows: list[TimerRow] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.setSpacing(10)
        layout.addWidget(QLabel("<b>Timers and reminders</b>"))
        hint = QLabel("Set them by voice; they are said when they ring (shown as a notice "
                      "while the microphone is muted). Say “cancel my timer” or press Cancel.")
        hint.setObjectName("subtitle")
        hint.setWordWrap(True)
        layout.addWidget(hint)
        self._list = QWidget()
        self._rows_layout = QVBoxLayout(self._list)
        self._rows_layout.setContentsMargins(0, 0, 4, 0)
        self._rows_layout.setSpacing(6)
        self._rows_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self._list)
        layout.addWidget(scroll, 1)
        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setObjectName("subtitle")
        self.empty.setWordWrap(True)
        layout.addWidget(self.empty)
        self.status = plain(QLabel())  # a database error, in one line
        self.status.setObjectName("subtitle")
        self.status.hide()
        layout.addWidget(self.status)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        self.refresh()
        keyboard.prepare(self)

    # ---- reading -----------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the list again and show it; a failed read keeps the rows shown and says why."""
        source = self.source()
        if source is None:
            self._show([])
            self._say("Timers are not kept in this session (there is no database).")
            return
        try:
            pending = source.pending()
        except (sqlite3.Error, SaveFailed, OSError) as exc:
            log.warning("reading the timers failed: %s", exc)
            self._say(f"Could not read the timers: {reason(exc)}.")
            return
        self._show(pending)
        self._say("")

    def _show(self, pending: list[Reminder]) -> None:
        if [r.reminder for r in self.rows] != pending:
            self._rebuild(pending)
        now = self._now()
        for row in self.rows:
            due = row.reminder.due_at
            tooltip = f"Rings at {datetime.fromtimestamp(due, now.tzinfo):%H:%M:%S, %a %d %b}"
            row.show_time(timer_text.when(row.reminder, now), tooltip)
        self.empty.setVisible(not self.rows)

    def _rebuild(self, pending: list[Reminder]) -> None:
        focused = self.focusWidget()
        had_focus = any(focused is row.cancel for row in self.rows)
        for row in self.rows:
            self._rows_layout.removeWidget(row)
            row.deleteLater()
        self.rows = [TimerRow(r, self.cancel) for r in pending]
        for index, row in enumerate(self.rows):
            self._rows_layout.insertWidget(index, row)
        if had_focus and self.rows:  # the keyboard stays in the list after a Cancel
            self.rows[0].cancel.setFocus()

    def texts(self) -> list[tuple[str, str, str]]:
        """(kind, what, when) of each row shown, top to bottom (for tests)."""
        return [(row.kind.text(), row.label.text(), row.when.text()) for row in self.rows]

    # ---- cancelling --------------------------------------------------------------------

    def cancel(self, reminder_id: int) -> None:
        source = self.source()
        if source is None:
            return
        try:
            cancelled = source.cancel(reminder_id)
        except (sqlite3.Error, SaveFailed, OSError) as exc:
            log.warning("cancelling timer %d failed: %s", reminder_id, exc)
            self._say(f"Could not cancel it: {reason(exc)}.")
            return
        self.refresh()
        if not cancelled:
            self._say("It had already rung or been cancelled.")

    def _say(self, text: str) -> None:
        self.status.setText(" ".join(text.split()))
        self.status.setVisible(bool(text))

    # ---- only while shown ----------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()
        self.timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        self.timer.stop()
        super().hideEvent(event)
