"""The desktop pet's speech bubble: the sentence the voice is saying now, in a small rounded
box with a tail pointing down at the character.

It paints itself (nothing when empty) rather than being a label that shows and hides, so
the character never jumps when a sentence comes or goes. A long sentence is cut at a word
to the lines that fit, with an ellipsis.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import QWidget

from app.ui import theme

PADDING = 10
TAIL = 9
FONT_PX = 13
MAX_LINES = 3
BUBBLE_HEIGHT = 2 * PADDING + TAIL + MAX_LINES * 17 + 4
"""Room for three lines of ``FONT_PX`` text (the pet's window reserves it above the face)."""
FLAGS = int(Qt.AlignmentFlag.AlignCenter) | int(Qt.TextFlag.TextWordWrap)


def fit_text(metrics: QFontMetrics, text: str, width: int, height: int) -> str:
    """``text``, or as many of its first words as fit ``width`` x ``height`` wrapped, plus
    an ellipsis."""
    box = QRect(0, 0, max(1, width), 100_000)
    if metrics.boundingRect(box, FLAGS, text).height() <= height:
        return text
    words = text.split()
    while words:
        words.pop()
        shorter = " ".join(words) + "…"
        if metrics.boundingRect(box, FLAGS, shorter).height() <= height:
            return shorter
    return "…"


class PetBubble(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("petBubble")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)  # drags the pet
        self._text = ""
        self._shown = ""
        self._font = QFont()
        self._font.setPixelSize(FONT_PX)

    @property
    def text(self) -> str:
        """The whole sentence (``shown_text`` is what fits)."""
        return self._text

    @property
    def shown_text(self) -> str:
        return self._shown

    def set_text(self, text: str) -> None:
        text = " ".join(text.split())
        if text != self._text:
            self._text = text
            self._fit()
            self.update()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _text_box(self) -> QRect:
        return QRect(PADDING, PADDING, max(1, self.width() - 2 * PADDING),
                     max(1, self.height() - 2 * PADDING - TAIL))

    def _fit(self) -> None:
        box = self._text_box()
        metrics = QFontMetrics(self._font)
        self._shown = fit_text(metrics, self._text, box.width() - 8,
                               box.height()) if self._text else ""

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self._shown:
            return
        metrics = QFontMetrics(self._font)
        box = self._text_box()
        used = metrics.boundingRect(QRect(0, 0, box.width() - 8, 100_000), FLAGS, self._shown)
        width = min(box.width(), used.width() + 8) + 2 * PADDING
        height = used.height() + 2 * PADDING
        bottom = self.height() - TAIL - 1.0
        left = (self.width() - width) / 2
        bubble = QRectF(left, bottom - height, width, height)
        path = QPainterPath()
        path.addRoundedRect(bubble, 12, 12)
        tail = QPainterPath()
        centre = self.width() / 2
        tail.moveTo(QPointF(centre - TAIL, bottom - 1))
        tail.lineTo(QPointF(centre, bottom + TAIL))
        tail.lineTo(QPointF(centre + TAIL, bottom - 1))
        tail.closeSubpath()
        path = path.united(tail)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(QColor(theme.BORDER), 1.2))
        painter.setBrush(QColor(theme.CARD_HI))
        painter.drawPath(path)
        painter.setFont(self._font)
        painter.setPen(QColor(theme.TEXT))
        painter.drawText(bubble.adjusted(PADDING, PADDING, -PADDING, -PADDING), FLAGS,
                         self._shown)
        painter.end()
