"""The drawn face itself: hair, head, eyes, brows and mouth around a centre and radius.

Each part reads the pose (where the eyes look, how open the mouth is); ``face.paint_face``
puts them together.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen, QRadialGradient

from app.core.events import AssistantState
from app.ui.face_pose import FaceColours, FacePose, eye_drift


def hair_back(painter: QPainter, centre: QPointF, r: float, c: FaceColours) -> None:
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(c.hair)
    painter.drawEllipse(QPointF(centre.x(), centre.y() - r * 0.12), r * 1.12, r * 1.1)


def head(painter: QPainter, centre: QPointF, r: float, c: FaceColours) -> None:
    shade = QRadialGradient(QPointF(centre.x() - r * 0.25, centre.y() - r * 0.3), r * 1.4)
    shade.setColorAt(0.0, c.skin.lighter(106))
    shade.setColorAt(0.7, c.skin)
    shade.setColorAt(1.0, c.skin_shade)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QBrush(shade))
    painter.drawEllipse(centre, r * 0.92, r)
    # ears
    painter.setBrush(c.skin_shade)
    for side in (-1, 1):
        painter.drawEllipse(QPointF(centre.x() + side * r * 0.9, centre.y() + r * 0.08),
                            r * 0.12, r * 0.18)


def hair_front(painter: QPainter, centre: QPointF, r: float, c: FaceColours) -> None:
    """A fringe: a cap over the forehead with a soft swept edge."""
    x, y = centre.x(), centre.y()
    path = QPainterPath()
    path.moveTo(x - r * 0.98, y + r * 0.05)
    path.cubicTo(x - r * 1.05, y - r * 1.45, x + r * 1.05, y - r * 1.45, x + r * 0.98, y + r * 0.05)
    path.cubicTo(x + r * 0.8, y - r * 0.35, x + r * 0.45, y - r * 0.5, x + r * 0.1, y - r * 0.42)
    path.cubicTo(x - r * 0.2, y - r * 0.62, x - r * 0.7, y - r * 0.45, x - r * 0.98, y + r * 0.05)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(c.hair)
    painter.drawPath(path)
    shine = QPen(c.hair_light, max(1.0, r * 0.04), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)
    painter.setPen(shine)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    arc = QRectF(x - r * 0.7, y - r * 1.02, r * 1.1, r * 0.9)
    painter.drawArc(arc, 100 * 16, 50 * 16)


def look(pose: FacePose, r: float) -> tuple[float, float]:
    if pose.state is AssistantState.THINKING:
        return r * 0.05, -r * 0.07
    if pose.state is AssistantState.LISTENING:
        return 0.0, -r * 0.01
    return eye_drift(r / 0.3, pose.t), 0.0


def eyes(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
    x, y = centre.x(), centre.y() + r * 0.08
    dx, dy = look(pose, r)
    open_ = max(0.06, 1.0 - pose.blink)
    if pose.state is AssistantState.MUTED:
        open_ = min(open_, 0.35)
    if pose.state is AssistantState.LISTENING:
        open_ *= 1.08
    w, h = r * 0.15, r * 0.2 * open_
    painter.setPen(Qt.PenStyle.NoPen)
    for side in (-1, 1):
        ex = x + side * r * 0.36
        if open_ < 0.2:
            pen = QPen(c.eye, max(1.5, r * 0.05), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)
            painter.setPen(pen)
            painter.drawLine(QPointF(ex - w, y), QPointF(ex + w, y))
            painter.setPen(Qt.PenStyle.NoPen)
            continue
        painter.setBrush(c.eye)
        painter.drawEllipse(QPointF(ex + dx, y + dy), w, h)
        iris = QColor(c.accent).darker(160)
        painter.setBrush(iris)
        painter.drawEllipse(QPointF(ex + dx, y + dy + h * 0.35), w * 0.7, h * 0.45)
        painter.setBrush(QColor(255, 255, 255, 230))
        painter.drawEllipse(QPointF(ex + dx - w * 0.35, y + dy - h * 0.4), w * 0.32, w * 0.32)
        painter.drawEllipse(QPointF(ex + dx + w * 0.3, y + dy + h * 0.25), w * 0.14, w * 0.14)
    painter.setBrush(c.blush)
    for side in (-1, 1):
        painter.drawEllipse(QPointF(x + side * r * 0.55, y + r * 0.32), r * 0.14, r * 0.08)


def brows(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
    x, y = centre.x(), centre.y() - r * 0.2
    lift = {AssistantState.THINKING: r * 0.07, AssistantState.LISTENING: r * 0.04}.get(
        pose.state, 0.0
    )
    tilt = r * 0.06 if pose.state is AssistantState.ERROR else 0.0
    pen = QPen(c.hair, max(1.5, r * 0.05), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    for side in (-1, 1):
        inner = QPointF(x + side * r * 0.22, y - lift - tilt)
        outer = QPointF(x + side * r * 0.5, y - lift + tilt * 0.3)
        painter.drawLine(inner, outer)
    painter.setPen(Qt.PenStyle.NoPen)


def mouth(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
    x, y = centre.x(), centre.y() + r * 0.52
    lip = QColor("#7a3b46")
    if pose.state is AssistantState.SPEAKING and pose.mouth > 0.04:
        h = r * (0.035 + 0.15 * pose.mouth)
        w = r * (0.17 + 0.05 * pose.mouth)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor("#5a2430"))
        painter.drawEllipse(QPointF(x, y), w, h)
        painter.setBrush(QColor("#e2727f"))
        painter.drawEllipse(QPointF(x, y + h * 0.5), w * 0.6, h * 0.4)
        return
    pen = QPen(lip, max(1.5, r * 0.045), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    if pose.state is AssistantState.ERROR:
        painter.drawArc(QRectF(x - r * 0.14, y, r * 0.28, r * 0.16), 20 * 16, 140 * 16)
    elif pose.state is AssistantState.THINKING:
        painter.drawLine(QPointF(x - r * 0.08, y + r * 0.03), QPointF(x + r * 0.1, y))
    elif pose.state is AssistantState.LISTENING:
        painter.drawArc(QRectF(x - r * 0.12, y - r * 0.1, r * 0.24, r * 0.16), 200 * 16, 140 * 16)
    else:
        painter.drawArc(QRectF(x - r * 0.18, y - r * 0.14, r * 0.36, r * 0.2), 200 * 16, 140 * 16)
