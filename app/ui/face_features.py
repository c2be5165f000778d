"""The drawn face itself: hair, head, eyes, brows and mouth around a centre and radius.

Each part reads the pose (where the eyes look, how open the mouth is); ``face.paint_face``
puts them together.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen, QRadialGradient

from app.core.events import AssistantState
from app.core.visemes import Viseme
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
    """Where the eyes look: the expression's gaze plus (as much as it allows) the slow
    idle drift."""
    face = pose.expression
    return face.gaze_x * r + face.drift * eye_drift(r / 0.3, pose.t), face.gaze_y * r


def eyes(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
    face = pose.expression
    x, y = centre.x(), centre.y() + r * 0.08
    dx, dy = look(pose, r)
    open_ = max(0.06, (1.0 - pose.blink) * face.eye_open)
    w, h = r * 0.15, r * 0.2 * min(open_, 1.35)
    painter.setPen(Qt.PenStyle.NoPen)
    for side in (-1, 1):
        ex = x + side * r * 0.36
        if open_ < 0.2 or face.eye_smile > 0.97:
            _closed_eye(painter, QPointF(ex + dx, y + dy), w, r, c, face.eye_smile > 0.5)
            continue
        painter.save()
        lid_y = y + dy - h + 2 * h * face.eye_lid  # the upper lid lowered (half-lidded)
        if face.eye_smile > 0.01 or face.eye_lid > 0.01:
            box = QPainterPath()
            box.addRect(QRectF(ex + dx - 2 * w, lid_y, 4 * w, 4 * h))
            if face.eye_smile > 0.01:  # the lower lid rises: a crescent of the eye is left
                lid = QPainterPath()
                lid.addEllipse(QPointF(ex + dx, y + dy + h * (2.6 - 2.0 * face.eye_smile)),
                               w * 1.9, h * 1.6)
                box = box.subtracted(lid)
            painter.setClipPath(box)
        painter.setBrush(c.eye)
        painter.drawEllipse(QPointF(ex + dx, y + dy), w, h)
        iris = QColor(c.accent).darker(160)
        painter.setBrush(iris)
        painter.drawEllipse(QPointF(ex + dx, y + dy + h * 0.35), w * 0.7, h * 0.45)
        painter.setBrush(QColor(255, 255, 255, 230))
        painter.drawEllipse(QPointF(ex + dx - w * 0.35, y + dy - h * 0.4), w * 0.32, w * 0.32)
        painter.drawEllipse(QPointF(ex + dx + w * 0.3, y + dy + h * 0.25), w * 0.14, w * 0.14)
        painter.restore()
        if face.eye_lid > 0.05:
            painter.setPen(QPen(c.eye, max(1.5, r * 0.035), Qt.PenStyle.SolidLine,
                                Qt.PenCapStyle.RoundCap))
            half = w * (1.0 - (2 * face.eye_lid - 1.0) ** 2) ** 0.5 * 1.05
            painter.drawLine(QPointF(ex + dx - half, lid_y), QPointF(ex + dx + half, lid_y))
            painter.setPen(Qt.PenStyle.NoPen)
    _cheeks(painter, x, y, r, c, face.blush)


def _closed_eye(painter: QPainter, at: QPointF, w: float, r: float, c: FaceColours,
                happy: bool) -> None:
    """A blink's line, or (happy) an upturned arc."""
    pen = QPen(c.eye, max(1.5, r * 0.05), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    if happy:
        painter.drawArc(QRectF(at.x() - w, at.y() - w * 0.45, 2 * w, w * 1.3), 20 * 16, 140 * 16)
    else:
        painter.drawLine(QPointF(at.x() - w, at.y()), QPointF(at.x() + w, at.y()))
    painter.setPen(Qt.PenStyle.NoPen)


def _cheeks(painter: QPainter, x: float, y: float, r: float, c: FaceColours,
            blush: float) -> None:
    colour = QColor(c.blush)
    colour.setAlpha(min(255, int(c.blush.alpha() * (1.0 + 1.6 * blush))))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    grow = 1.0 + 0.25 * blush
    for side in (-1, 1):
        painter.drawEllipse(QPointF(x + side * r * 0.55, y + r * 0.32), r * 0.14 * grow,
                            r * 0.08 * grow)
    if blush < 0.6:
        return
    line = QColor(c.accent).darker(130)
    line.setAlphaF(min(1.0, (blush - 0.6) * 2.0) * 0.7)
    painter.setPen(QPen(line, max(1.0, r * 0.018), Qt.PenStyle.SolidLine,
                        Qt.PenCapStyle.RoundCap))
    for side in (-1, 1):
        for i in (-1, 0, 1):
            cx = x + side * r * 0.55 + i * r * 0.06
            painter.drawLine(QPointF(cx + r * 0.02, y + r * 0.29),
                             QPointF(cx - r * 0.02, y + r * 0.35))
    painter.setPen(Qt.PenStyle.NoPen)


def brows(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
    face = pose.expression
    x, y = centre.x(), centre.y() - r * 0.2
    lift, tilt = r * face.brow_lift, r * face.brow_tilt
    pen = QPen(c.hair, max(1.5, r * 0.05), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    for side in (-1, 1):
        raised = lift + (r * face.brow_skew if side > 0 else 0.0)
        inner = QPointF(x + side * r * 0.22, y - raised - tilt)
        outer = QPointF(x + side * r * 0.5, y - raised + tilt * 0.3)
        painter.drawLine(inner, outer)
    painter.setPen(Qt.PenStyle.NoPen)


SHAPES: dict[Viseme | None, tuple[float, float, float]] = {
    Viseme.CLOSED: (1.0, 0.0, 0.0),
    Viseme.A: (1.0, 1.0, 0.0),
    Viseme.I: (1.3, 0.35, 0.0),
    Viseme.U: (0.55, 0.5, 1.0),
    Viseme.E: (1.15, 0.6, 0.0),
    Viseme.O: (0.75, 0.9, 0.8),
}
"""Lip-sync shape -> (width, opening, roundness) against the level's plain mouth: "i"
spreads the lips and nearly shuts, "u" purses them into a small ring, "o" a larger one."""


def mouth(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
    """One shape for every mouth: two corners and the lips' curves between them. The
    expression sets the corners (smile, frown, smirk) and the width; speaking (the
    playback level, shaped by the lip-sync viseme) or surprise opens it."""
    face = pose.expression
    x, y = centre.x(), centre.y() + r * 0.52
    speaking = pose.state is AssistantState.SPEAKING and pose.mouth > 0.04
    wide, tall, rounded = SHAPES.get(pose.viseme, (1.0, 1.0, 0.0)) if speaking else (1, 1, 0)
    opening = r * (0.06 + 0.26 * pose.mouth) * tall if speaking else 0.0
    opening = max(opening, r * 0.16 * face.mouth_open)
    w = r * 0.17 * face.mouth_width * wide * (1.0 + (0.3 * pose.mouth if speaking else 0.0))
    bend, skew = r * 0.1 * face.mouth_curve, r * 0.05 * face.mouth_skew
    left, right = QPointF(x - w, y - bend + skew), QPointF(x + w, y - bend - skew)
    mid = y + bend * 0.9
    if opening < r * 0.02:
        lips = QPainterPath(left)
        lips.quadTo(QPointF(x, mid), right)
        pen = QPen(QColor("#7a3b46"), max(1.5, r * 0.045), Qt.PenStyle.SolidLine,
                   Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(lips)
        painter.setPen(Qt.PenStyle.NoPen)
        return
    lift = opening * (0.3 + 0.6 * max(face.mouth_open, rounded))  # an "o" rounds the top lip
    lips = QPainterPath(left)
    lips.cubicTo(QPointF(x - w * 0.55, mid - lift), QPointF(x + w * 0.55, mid - lift), right)
    low = mid + opening * 1.3
    lips.cubicTo(QPointF(x + w * 0.55, low), QPointF(x - w * 0.55, low), left)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("#5a2430"))
    painter.drawPath(lips)
    painter.save()
    painter.setClipPath(lips)
    painter.setBrush(QColor("#e2727f"))
    painter.drawEllipse(QPointF(x, mid + opening * 0.95), w * 0.6, opening * 0.45)
    painter.restore()
