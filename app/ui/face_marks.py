"""What each assistant state adds around the face: the accent halo, the thinking bubble,
the muted and error overlays and badges."""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen, QRadialGradient

from app.core.events import AssistantState
from app.ui.face_pose import FaceColours, FacePose


def overlay(painter: QPainter, rect: QRectF, colour: QColor) -> None:
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    radius = min(rect.width(), rect.height()) * 0.08
    painter.drawRoundedRect(rect, radius, radius)


def ring(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
    """An accent halo: steady when idle, pulsing when listening, beating with the voice."""
    state = pose.state
    if state in (AssistantState.MUTED, AssistantState.ERROR):
        return
    pulse = 0.5 + 0.5 * math.sin(pose.t * 4.0)
    if state is AssistantState.LISTENING:
        strength, spread = 0.55 + 0.35 * pulse, 1.32 + 0.04 * pulse
    elif state is AssistantState.SPEAKING:
        strength, spread = 0.45 + 0.5 * pose.mouth, 1.3 + 0.08 * pose.mouth
    elif state is AssistantState.THINKING:
        strength, spread = 0.35, 1.3
    else:
        strength, spread = 0.18, 1.28
    glow = QRadialGradient(centre, r * spread * 1.12)
    inner = QColor(c.accent)
    inner.setAlphaF(0.0)
    mid = QColor(c.accent)
    mid.setAlphaF(0.55 * strength)
    glow.setColorAt(0.0, inner)
    glow.setColorAt(0.78, inner)
    glow.setColorAt(0.86, mid)
    glow.setColorAt(1.0, inner)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QBrush(glow))
    painter.drawEllipse(centre, r * spread * 1.12, r * spread * 1.12)
    if state is AssistantState.LISTENING:
        pen = QPen(c.accent, max(1.5, r * 0.025))
        ring = QColor(c.accent)
        ring.setAlphaF(0.5 + 0.4 * pulse)
        pen.setColor(ring)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawEllipse(centre, r * spread * 0.98, r * spread * 0.98)


def thinking_dots(painter: QPainter, centre: QPointF, r: float, c: FaceColours,
                   pose: FacePose) -> None:
    bubble = QPointF(centre.x() + r * 1.05, centre.y() - r * 1.05)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(255, 255, 255, 235))
    painter.drawEllipse(QPointF(centre.x() + r * 0.75, centre.y() - r * 0.7), r * 0.05, r * 0.05)
    painter.drawEllipse(QPointF(centre.x() + r * 0.86, centre.y() - r * 0.84), r * 0.08, r * 0.08)
    painter.drawRoundedRect(QRectF(bubble.x() - r * 0.36, bubble.y() - r * 0.18, r * 0.72,
                                   r * 0.36), r * 0.18, r * 0.18)
    for i in range(3):
        phase = (pose.t * 2.2 - i * 0.28) % 1.0
        bounce = math.sin(phase * math.pi) if phase < 1.0 else 0.0
        dot = QColor(c.accent)
        dot.setAlphaF(0.45 + 0.55 * bounce)
        painter.setBrush(dot)
        painter.drawEllipse(QPointF(bubble.x() + (i - 1) * r * 0.2, bubble.y() - bounce * r * 0.05),
                            r * 0.065, r * 0.065)


def mic_off_badge(painter: QPainter, centre: QPointF, r: float) -> None:
    at = QPointF(centre.x() + r * 0.85, centre.y() + r * 0.85)
    size = r * 0.3
    painter.setPen(QPen(QColor("#ffffff"), max(1.0, r * 0.02)))
    painter.setBrush(QColor("#e5485a"))
    painter.drawEllipse(at, size, size)
    pen = QPen(QColor("#ffffff"), max(1.5, size * 0.13), Qt.PenStyle.SolidLine,
               Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    body = QRectF(at.x() - size * 0.2, at.y() - size * 0.55, size * 0.4, size * 0.7)
    painter.drawRoundedRect(body, size * 0.2, size * 0.2)
    painter.drawArc(QRectF(at.x() - size * 0.38, at.y() - size * 0.35, size * 0.76, size * 0.7),
                    200 * 16, 140 * 16)
    painter.drawLine(QPointF(at.x(), at.y() + size * 0.35), QPointF(at.x(), at.y() + size * 0.55))
    painter.drawLine(QPointF(at.x() - size * 0.55, at.y() - size * 0.55),
                     QPointF(at.x() + size * 0.55, at.y() + size * 0.55))


def error_badge(painter: QPainter, rect: QRectF, centre: QPointF, r: float,
                 message: str) -> None:
    at = QPointF(centre.x() + r * 0.85, centre.y() + r * 0.85)
    size = r * 0.3
    painter.setPen(QPen(QColor("#ffffff"), max(1.0, r * 0.02)))
    painter.setBrush(QColor("#e5485a"))
    painter.drawEllipse(at, size, size)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(max(8, int(size * 1.2)))
    painter.setFont(font)
    painter.drawText(QRectF(at.x() - size, at.y() - size, 2 * size, 2 * size),
                     Qt.AlignmentFlag.AlignCenter, "!")
    if message:
        font.setBold(False)
        font.setPixelSize(max(10, int(r * 0.11)))
        painter.setFont(font)
        painter.setPen(QColor("#ffd5da"))
        box = QRectF(rect.left() + r * 0.2, centre.y() + r * 1.2, rect.width() - r * 0.4, r * 0.6)
        painter.drawText(box, int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
                         | int(Qt.TextFlag.TextWordWrap), message)
