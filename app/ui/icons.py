"""Small icons drawn in code (mic, mic off, gauge, pet, timer, bell), so they are crisp at
any scale and theme."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap

from app.personas.model import AvatarStyle
from app.ui.face import render_thumbnail

SIZE = 64


def _canvas() -> tuple[QPixmap, QPainter]:
    pixmap = QPixmap(SIZE, SIZE)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    return pixmap, painter


def _pen(colour: str) -> QPen:
    return QPen(QColor(colour), 5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)


def mic_icon(off: bool = False, colour: str = "#e8eaf2") -> QIcon:
    pixmap, painter = _canvas()
    painter.setPen(_pen(colour))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRoundedRect(QRectF(24, 8, 16, 30), 8, 8)
    painter.drawArc(QRectF(15, 18, 34, 30), 200 * 16, 140 * 16)
    painter.drawLine(QPointF(32, 48), QPointF(32, 56))
    if off:
        painter.setPen(_pen("#ff5d6c"))
        painter.drawLine(QPointF(12, 10), QPointF(52, 54))
    painter.end()
    return QIcon(pixmap)


def gauge_icon(colour: str = "#e8eaf2") -> QIcon:
    pixmap, painter = _canvas()
    painter.setPen(_pen(colour))
    painter.drawArc(QRectF(8, 14, 48, 48), 0, 180 * 16)
    painter.drawLine(QPointF(32, 38), QPointF(46, 24))
    painter.end()
    return QIcon(pixmap)


def pet_icon(colour: str = "#e8eaf2") -> QIcon:
    """A small face stepping out of a window's corner: the desktop pet."""
    pixmap, painter = _canvas()
    painter.setPen(_pen(colour))
    painter.drawRoundedRect(QRectF(6, 6, 36, 30), 5, 5)
    painter.setBrush(QColor("#12141c"))
    painter.drawEllipse(QPointF(42, 40), 16, 16)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(colour))
    painter.drawEllipse(QPointF(36, 38), 2.6, 2.6)
    painter.drawEllipse(QPointF(48, 38), 2.6, 2.6)
    painter.end()
    return QIcon(pixmap)


def timer_icon(colour: str = "#e8eaf2") -> QIcon:
    """A stopwatch: a timer (so long from now)."""
    pixmap, painter = _canvas()
    painter.setPen(_pen(colour))
    painter.drawEllipse(QPointF(32, 36), 21, 21)
    painter.drawLine(QPointF(32, 36), QPointF(32, 24))
    painter.drawLine(QPointF(26, 7), QPointF(38, 7))
    painter.drawLine(QPointF(32, 7), QPointF(32, 14))
    painter.end()
    return QIcon(pixmap)


def bell_icon(colour: str = "#e8eaf2") -> QIcon:
    """A bell: a reminder (at a time of day)."""
    pixmap, painter = _canvas()
    painter.setPen(_pen(colour))
    painter.drawArc(QRectF(16, 10, 32, 34), 0, 180 * 16)
    painter.drawLine(QPointF(16, 27), QPointF(14, 46))
    painter.drawLine(QPointF(48, 27), QPointF(50, 46))
    painter.drawLine(QPointF(10, 47), QPointF(54, 47))
    painter.drawLine(QPointF(32, 6), QPointF(32, 10))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(colour))
    painter.drawEllipse(QPointF(32, 54), 5, 5)
    painter.end()
    return QIcon(pixmap)


def app_icon(style: AvatarStyle | None = None) -> QIcon:
    """The default persona's face: the window and tray icon."""
    return QIcon(render_thumbnail(style or AvatarStyle(), SIZE))
