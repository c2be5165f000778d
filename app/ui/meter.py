"""A small microphone level meter: a rounded bar with a soft peak-hold decay."""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from app.ui import theme


class LevelMeter(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("micMeter")
        self.setToolTip("Microphone level")
        self.setFixedHeight(8)
        self.setMinimumWidth(40)  # narrower on a half-screen window
        self.setMaximumWidth(120)
        self._level = 0.0
        self._muted = False

    @property
    def level(self) -> float:
        return self._level

    def set_level(self, rms: float) -> None:
        """RMS in; shown on a dB scale (-60..0 dB) because speech spans a wide range."""
        db = 20.0 * math.log10(max(rms, 1e-6))
        target = min(1.0, max(0.0, (db + 60.0) / 60.0))
        before = self._level
        self._level = target if target > self._level else self._level * 0.7 + target * 0.3
        if self._drawn(before) != self._drawn(self._level):
            self.update()  # at 33 Hz, so only when a pixel changes (silence: never)

    def _drawn(self, level: float) -> int:
        """The filled width in quarter pixels, 0 when the bar is not drawn (see paintEvent)."""
        return round(self.width() * level * 4) if level > 0.01 else 0

    def set_muted(self, muted: bool) -> None:
        self._muted = muted
        if muted:
            self._level = 0.0
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        rect = QRectF(self.rect())
        radius = rect.height() / 2
        painter.setBrush(QColor(theme.CARD_HI))
        painter.drawRoundedRect(rect, radius, radius)
        if not self._muted and self._level > 0.01:
            colour = QColor(theme.WARNING if self._level > 0.9 else "#4fd1a1")
            painter.setBrush(colour)
            filled = QRectF(rect.left(), rect.top(), rect.width() * self._level, rect.height())
            painter.drawRoundedRect(filled, radius, radius)
        painter.end()

    def sizeHint(self) -> QSize:
        return QSize(120, 8)
