"""The procedural face: one paint function shared by the live avatar and the sidebar thumbnails.

Everything is derived from the persona's AvatarStyle colours and a small FacePose, so painting
is a handful of ellipses and paths (well under a millisecond) and needs no image assets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
    QRadialGradient,
)

from app.core.events import AssistantState
from app.personas.model import AvatarStyle


@dataclass(frozen=True)
class FaceColours:
    """QColors built once per persona, so a paint allocates nothing from strings."""

    skin: QColor
    skin_shade: QColor
    hair: QColor
    hair_light: QColor
    accent: QColor
    background: QColor
    background_edge: QColor
    eye: QColor
    blush: QColor

    @classmethod
    def from_style(cls, style: AvatarStyle) -> FaceColours:
        skin = QColor(style.skin)
        accent = QColor(style.accent)
        blush = QColor(accent)
        blush.setAlpha(70)
        background = QColor(style.background)
        return cls(
            skin=skin,
            skin_shade=skin.darker(118),
            hair=QColor(style.hair),
            hair_light=QColor(style.hair).lighter(135),
            accent=accent,
            background=background.lighter(135),
            background_edge=background.darker(140),
            eye=QColor("#231a24"),
            blush=blush,
        )


@dataclass(frozen=True)
class FacePose:
    """What the face does this frame."""

    state: AssistantState = AssistantState.IDLE
    blink: float = 0.0
    """0 = eyes open, 1 = closed."""
    mouth: float = 0.0
    """0 = closed, 1 = wide open (speaking)."""
    t: float = 0.0
    """Seconds since the widget started, for breathing, pulses and the thinking dots."""
    message: str = ""
    """Shown under the face in the error state."""


def paint_face(painter: QPainter, rect: QRectF, colours: FaceColours, pose: FacePose,
               *, decorations: bool = True, backdrop: QPixmap | None = None,
               picture: QPixmap | None = None, head: QPixmap | None = None) -> None:
    """Paint the whole avatar into ``rect``; ``decorations`` off for tiny thumbnails.
    ``backdrop`` is a cached ``render_backdrop`` of the same size (gradients are slow).
    ``picture`` (a persona's image, already round) replaces the drawn face. ``head`` is a
    cached ``render_head`` of the same size: the face then moves with its breath in whole
    pixels (eyes and mouth with it), so the cached hair and head stay sharp."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if backdrop is not None:
        painter.drawPixmap(rect.topLeft(), backdrop)
    else:
        _background(painter, rect, colours, pose)
    size = min(rect.width(), rect.height())
    breathe = breathing(size, pose.t)
    centre = QPointF(rect.center().x(), rect.center().y() + size * 0.02 + breathe)
    r = size * 0.3
    if head is not None and picture is None:
        centre = QPointF(round(centre.x()), round(centre.y()))
    if decorations:
        _ring(painter, centre, r, colours, pose)
    if picture is not None:
        side = r * 2.3
        painter.drawPixmap(QRectF(centre.x() - side / 2, centre.y() - side / 2, side, side),
                           picture, QRectF(picture.rect()))
    else:
        if head is not None:
            half = head_half_side(r)
            painter.drawPixmap(QPointF(centre.x() - half, centre.y() - half), head)
        else:
            _hair_back(painter, centre, r, colours)
            _head(painter, centre, r, colours)
            _hair_front(painter, centre, r, colours)
        _eyes(painter, centre, r, colours, pose)
        _brows(painter, centre, r, colours, pose)
        _mouth(painter, centre, r, colours, pose)
    if decorations and pose.state is AssistantState.THINKING:
        _thinking_dots(painter, centre, r, colours, pose)
    if pose.state is AssistantState.MUTED:
        _overlay(painter, rect, QColor(8, 9, 14, 130))
        if decorations:
            _mic_off_badge(painter, centre, r)
    if pose.state is AssistantState.ERROR:
        _overlay(painter, rect, QColor(200, 30, 50, 60))
        if decorations:
            _error_badge(painter, rect, centre, r, pose.message)
    painter.restore()


def breathing(size: float, t: float) -> float:
    """How far (px) the face has moved down with its breath at ``t``."""
    return math.sin(t * 1.6) * size * 0.004


def eye_drift(size: float, t: float) -> float:
    """How far (px) the eyes have drifted sideways at ``t`` in a calm state (see ``_look``)."""
    return size * 0.3 * 0.02 * math.sin(t * 0.35)


def render_backdrop(width: int, height: int, colours: FaceColours, ratio: float) -> QPixmap:
    """The avatar's static background, painted once per size and persona."""
    pixmap = QPixmap(max(1, round(width * ratio)), max(1, round(height * ratio)))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    _background(painter, QRectF(0, 0, width, height), colours, FacePose())
    painter.end()
    return pixmap


def head_half_side(r: float) -> int:
    """Half the side of ``render_head``'s square: the hair reaches 1.22 r from the centre."""
    return math.ceil(r * 1.25) + 2


def render_head(size: float, colours: FaceColours, ratio: float) -> QPixmap:
    """The hair and head of a face ``size`` px across, painted once per size and persona.

    They only move with the breath, yet were most of a repaint's cost (the gradient head,
    the fringe's curves): drawing them from this pixmap makes the calm avatar's repaints,
    about two a second while the app listens in silence, several times cheaper."""
    r = size * 0.3
    half = head_half_side(r)
    pixmap = QPixmap(max(1, round(2 * half * ratio)), max(1, round(2 * half * ratio)))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    centre = QPointF(half, half)
    _hair_back(painter, centre, r, colours)
    _head(painter, centre, r, colours)
    _hair_front(painter, centre, r, colours)
    painter.end()
    return pixmap


def _background(painter: QPainter, rect: QRectF, c: FaceColours, pose: FacePose) -> None:
    gradient = QRadialGradient(rect.center(), max(rect.width(), rect.height()) * 0.65)
    gradient.setColorAt(0.0, c.background)
    gradient.setColorAt(1.0, c.background_edge)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QBrush(gradient))
    radius = min(rect.width(), rect.height()) * 0.08
    painter.drawRoundedRect(rect, radius, radius)


def _overlay(painter: QPainter, rect: QRectF, colour: QColor) -> None:
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    radius = min(rect.width(), rect.height()) * 0.08
    painter.drawRoundedRect(rect, radius, radius)


def _ring(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
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


def _hair_back(painter: QPainter, centre: QPointF, r: float, c: FaceColours) -> None:
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(c.hair)
    painter.drawEllipse(QPointF(centre.x(), centre.y() - r * 0.12), r * 1.12, r * 1.1)


def _head(painter: QPainter, centre: QPointF, r: float, c: FaceColours) -> None:
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


def _hair_front(painter: QPainter, centre: QPointF, r: float, c: FaceColours) -> None:
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


def _look(pose: FacePose, r: float) -> tuple[float, float]:
    if pose.state is AssistantState.THINKING:
        return r * 0.05, -r * 0.07
    if pose.state is AssistantState.LISTENING:
        return 0.0, -r * 0.01
    return eye_drift(r / 0.3, pose.t), 0.0


def _eyes(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
    x, y = centre.x(), centre.y() + r * 0.08
    dx, dy = _look(pose, r)
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


def _brows(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
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


def _mouth(painter: QPainter, centre: QPointF, r: float, c: FaceColours, pose: FacePose) -> None:
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


def _thinking_dots(painter: QPainter, centre: QPointF, r: float, c: FaceColours,
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


def _mic_off_badge(painter: QPainter, centre: QPointF, r: float) -> None:
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


def _error_badge(painter: QPainter, rect: QRectF, centre: QPointF, r: float,
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
