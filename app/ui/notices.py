"""One quiet place in the window for things the user should know but need not act on now.

Skipped persona files, a settings file that was reset, a settings save that failed, a
voice that fell back to another engine: each used to land only in the log. They now add
a line here. The header shows a small amber badge with the count; clicking it opens the
details panel under the header, and Dismiss clears them. Nothing pops up on its own:
these are not errors that stop the conversation (those keep the red banner).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
)

from app.ui import theme
from app.ui.plain import plain

MAX_NOTICES = 50
"""A hostile folder could produce thousands; the panel keeps the first ones and a count."""


@dataclass(frozen=True)
class Notice:
    """Posted through the event bridge from any thread; shown in the notice area."""

    text: str


_BUTTON_STYLE = f"""
QToolButton#noticesButton {{ color: {theme.WARNING}; border-color: #5a4520;
    background: #2a2418; font-weight: 600; padding: 7px 12px; }}
QToolButton#noticesButton:checked {{ border-color: {theme.WARNING}; }}
"""
_PANEL_STYLE = f"""
QFrame#noticePanel {{ background: {theme.CARD}; border: 1px solid #5a4520;
    border-radius: 12px; }}
QFrame#noticePanel QLabel#noticeTitle {{ color: {theme.WARNING}; font-weight: 600; }}
QFrame#noticePanel QLabel#noticeItem {{ color: {theme.TEXT}; }}
"""


class NoticeArea:
    """The badge button (for the header) and the details panel (for the main column)."""

    def __init__(self) -> None:
        self._messages: list[str] = []
        self._dropped = 0
        self.button = QToolButton()
        self.button.setObjectName("noticesButton")
        self.button.setCheckable(True)
        self.button.setIconSize(QSize(16, 16))
        self.button.setToolTip("Things Hanasu noticed (timers that rang, skipped files, "
                               "resets, fallbacks)")
        self.button.setStyleSheet(_BUTTON_STYLE)
        self.button.toggled.connect(self._show_panel)
        self.button.hide()
        self.panel = QFrame()
        self.panel.setObjectName("noticePanel")
        self.panel.setStyleSheet(_PANEL_STYLE)
        layout = QVBoxLayout(self.panel)
        layout.setContentsMargins(14, 10, 10, 10)
        layout.setSpacing(6)
        top = QHBoxLayout()
        self.title = QLabel()
        self.title.setObjectName("noticeTitle")
        top.addWidget(self.title, 1)
        self.dismiss = QPushButton("Dismiss")
        self.dismiss.setObjectName("noticeDismiss")
        self.dismiss.clicked.connect(self.clear)
        top.addWidget(self.dismiss, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        self._items = QVBoxLayout()
        self._items.setSpacing(4)
        layout.addLayout(self._items)
        self.panel.hide()

    @property
    def messages(self) -> list[str]:
        """The notices shown now, oldest first."""
        return list(self._messages)

    def add(self, text: str, once: bool = True) -> None:
        """Add one notice (identical ones are shown once: a restart repeats them; ``once``
        False for news that may come twice, such as two timers ringing alike)."""
        text = " ".join(text.split())
        if not text or (once and text in self._messages):
            return
        if len(self._messages) >= MAX_NOTICES:
            self._dropped += 1
        else:
            self._messages.append(text)
            label = plain(QLabel(f"• {text}"))  # names, file names, server errors
            label.setObjectName("noticeItem")
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self._items.addWidget(label)
        self._refresh()

    def clear(self) -> None:
        """Dismiss every notice and hide the badge."""
        self._messages.clear()
        self._dropped = 0
        while (item := self._items.takeAt(0)) is not None:
            widget = item.widget()
            if widget is not None:
                widget.deleteLater()
        self.button.setChecked(False)
        self._refresh()

    def _refresh(self) -> None:
        count = len(self._messages) + self._dropped
        self.button.setVisible(count > 0)
        self.button.setText(f"⚠ {count}")
        noun = "notice" if count == 1 else "notices"
        more = f" (only the first {MAX_NOTICES} are listed)" if self._dropped else ""
        self.title.setText(f"{count} {noun}{more}")
        if count == 0:
            self.panel.hide()

    def _show_panel(self, shown: bool) -> None:
        self.panel.setVisible(shown and bool(self._messages))

