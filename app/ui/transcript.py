"""The live transcript: chat bubbles for the user's words and the reply as it is heard."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent, QTextDocument
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from app.ui import theme
from app.ui.transcript_model import TranscriptModel, TurnEntry

USER_BUBBLE = (
    "QLabel {{ background: {bg}; color: #0d0f18; border-radius: 14px; padding: 9px 13px; }}"
)
REPLY_BUBBLE = (
    f"QLabel {{ background: {theme.CARD_HI}; border: 1px solid {theme.BORDER};"
    " border-radius: 14px; padding: 9px 13px; }"
)


def reply_html(entry: TurnEntry) -> str:
    """Heard words in full colour, unheard ones (after a barge-in) greyed out."""
    heard = html.escape(entry.spoken())
    unheard = html.escape(entry.unheard())
    if not heard and not unheard:
        if entry.ended and entry.interrupted:  # talked over before its first word
            return (f"<span style='color:{theme.MUTED_TEXT}; font-style:italic'>"
                    "(interrupted before a word was heard)</span>")
        return f"<span style='color:{theme.MUTED_TEXT}'>…</span>"
    parts = [heard] if heard else []
    if unheard:
        parts.append(f"<span style='color:{theme.UNHEARD_TEXT}'>{unheard}</span>")
        parts.append(f"<span style='color:{theme.MUTED_TEXT}; font-size:11px'>"
                     "&nbsp;&nbsp;(interrupted)</span>")
    return " ".join(parts)


MAX_ROWS = 150
"""Turns shown in the transcript; older ones are in Conversation -> History."""


class _Bubble(QLabel):
    """A word-wrapped label sized to its text (Qt would otherwise wrap it to a narrow column)."""

    PADDING = 30

    def __init__(self, from_user: bool, accent: str) -> None:
        super().__init__()
        self._max_width = 400
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        sheet = USER_BUBBLE.format(bg=accent) if from_user else REPLY_BUBBLE
        self.setStyleSheet(sheet)

    def show_html(self, text: str) -> None:
        self.setText(text)
        self._fit()

    def set_max_width(self, width: int) -> None:
        self._max_width = width
        self._fit()

    def _fit(self) -> None:
        doc = QTextDocument()
        doc.setDefaultFont(self.font())
        doc.setHtml(self.text())
        natural = int(doc.idealWidth()) + self.PADDING
        self.setFixedWidth(max(48, min(natural, self._max_width)))


class _TurnRow(QWidget):
    """The user's bubble (right) and the assistant's reply (left) of one turn."""

    def __init__(self, accent: str) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        self.user = _Bubble(True, accent)
        self.reply = _Bubble(False, accent)
        for bubble, right in ((self.user, True), (self.reply, False)):
            row = QHBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            if right:
                row.addStretch(1)
            row.addWidget(bubble)
            if not right:
                row.addStretch(1)
            layout.addLayout(row)

    def show_entry(self, entry: TurnEntry) -> None:
        self.user.show_html(html.escape(entry.user) or "…")
        self.reply.setVisible(entry.started_at is not None)
        self.reply.show_html(reply_html(entry))

    def set_bubble_width(self, width: int) -> None:
        self.user.set_max_width(width)
        self.reply.set_max_width(width)


class TranscriptView(QScrollArea):
    """Renders a TranscriptModel; the window calls ``refresh(turn)`` when a turn changes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.model = TranscriptModel()
        self._accent = theme.ACCENT
        self._rows: dict[int, _TurnRow] = {}
        body = QWidget()
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(4, 4, 10, 4)
        self._layout.setSpacing(14)
        self._hint = QLabel()
        self._hint.setObjectName("subtitle")
        self._hint.setWordWrap(True)
        self._hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._hint.setContentsMargins(24, 90, 24, 0)
        self._layout.addWidget(self._hint)
        self._layout.addStretch(1)
        self.setWidget(body)
        self.verticalScrollBar().rangeChanged.connect(self._stick_to_bottom)

    def reset(self, greeting: str, accent: str) -> None:
        """A fresh conversation (persona switch): no rows, the persona's greeting as a hint."""
        self.model.clear()
        for row in self._rows.values():
            row.deleteLater()
        self._rows.clear()
        self._accent = accent
        tip = "Just start talking — I'm listening."
        text = f"<p style='font-size:15px'>{html.escape(greeting)}</p>" if greeting else ""
        self._hint.setText(f"{text}<p>{tip}</p>")
        self._hint.show()

    def show_restored(self, exchanges: Sequence[tuple[str, str, bool]]) -> None:
        """Exchanges of a resumed conversation, ``(user, heard, interrupted)``, shown as
        finished turns above the live ones (negative ids: live turns count up from 1)."""
        for offset, (user, heard, interrupted) in enumerate(exchanges):
            entry = TurnEntry(offset - len(exchanges), user=user, confirmed=True,
                              tokens=[heard], started_at=0.0, ended=True,
                              interrupted=interrupted, heard=heard)
            self.model.turns[entry.turn_id] = entry
            self.refresh(entry)

    def refresh(self, entry: TurnEntry | None) -> None:
        if entry is None or not entry.confirmed:
            return
        row = self._rows.get(entry.turn_id)
        if row is None:
            row = _TurnRow(self._accent)
            row.set_bubble_width(self._bubble_width())
            self._rows[entry.turn_id] = row
            self._layout.insertWidget(self._layout.count() - 1, row)
            self._hint.hide()
            self._keep_recent()
        row.show_entry(entry)

    def _keep_recent(self) -> None:
        """An evening of talk must not grow the window without end (every row is widgets,
        and Qt lays them all out): the oldest rows leave the screen; History keeps them."""
        while len(self._rows) > MAX_ROWS:
            oldest = min(self._rows)
            self.model.turns.pop(oldest, None)
            self._rows.pop(oldest).deleteLater()

    def remove(self, turn_id: int) -> None:
        """Take a turn off the screen: its words were carried into the next turn."""
        self.model.turns.pop(turn_id, None)
        row = self._rows.pop(turn_id, None)
        if row is not None:
            row.deleteLater()

    def reply_html(self, turn_id: int) -> str:
        row = self._rows.get(turn_id)
        return row.reply.text() if row else ""

    def user_text(self, turn_id: int) -> str:
        row = self._rows.get(turn_id)
        return row.user.text() if row else ""

    def _bubble_width(self) -> int:
        """80 % of the column, however narrow: a wider bubble would be cut off."""
        return max(48, int(self.viewport().width() * 0.8))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = self._bubble_width()
        for row in self._rows.values():
            row.set_bubble_width(width)

    def _stick_to_bottom(self, _low: int, high: int) -> None:
        self.verticalScrollBar().setValue(high)
