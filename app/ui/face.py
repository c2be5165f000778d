"""The procedural face: one paint function shared by the live avatar and the sidebar thumbnails.

Everything is derived from the persona's AvatarStyle colours and a small FacePose
(``face_pose``), so painting is a handful of ellipses and paths (well under a millisecond)
and needs no image assets. The face's parts are ``face_features``; what a state adds
around it (halo, bubble, badges) is ``face_marks``. This module puts them together and
caches the parts that only move with the breath.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QPixmap, QRadialGradient

from app.core.events import AssistantState
from app.personas.model import AvatarStyle
from app.ui import face_features as features
from app.ui import face_marks as marks
from app.ui.face_pose import FaceColours, FacePose, breathing, nod_offset
from app.ui.layered_avatar import breath_stretch, paint_picture_mouth


def paint_face(painter: QPainter, rect: QRectF, colours: FaceColours, pose: FacePose,
               *, decorations: bool = True, backdrop: QPixmap | None = None,
               picture: QPixmap | None = None, head: QPixmap | None = None,
               bare: bool = False, mouth_at: tuple[float, float] | None = None) -> None:
    """Paint the whole avatar into ``rect``; ``decorations`` off for tiny thumbnails;
    ``bare``: no background card, and a state's tint only over the face (the desktop pet
    stands on the desktop itself, where a square would show).
    ``backdrop`` is a cached ``render_backdrop`` of the same size (gradients are slow).
    ``picture`` (a persona's image, already round) replaces the drawn face. ``head`` is a
    cached ``render_head`` of the same size: the face then moves with its breath in whole
    pixels (eyes and mouth with it), so the cached hair and head stay sharp. A picture
    breathes (a slight stretch) and gets a soft mouth at ``mouth_at`` while it speaks."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if backdrop is not None:
        painter.drawPixmap(rect.topLeft(), backdrop)
    elif not bare:
        _background(painter, rect, colours, pose)
    size = min(rect.width(), rect.height())
    breathe = breathing(size, pose.t)
    centre = QPointF(rect.center().x(),
                     rect.center().y() + size * 0.02 + breathe + nod_offset(size, pose.nod))
    r = size * 0.3
    if head is not None and picture is None:
        centre = QPointF(round(centre.x()), round(centre.y()))
    if decorations:
        marks.ring(painter, centre, r, colours, pose)
    if picture is not None:
        side = r * 2.3
        tall = side * breath_stretch(pose.t)
        square = QRectF(centre.x() - side / 2, centre.y() + side / 2 - tall, side, tall)
        painter.drawPixmap(square, picture, QRectF(picture.rect()))
        paint_picture_mouth(painter, square, pose.mouth, mouth_at)
    else:
        if head is not None:
            half = head_half_side(r)
            painter.drawPixmap(QPointF(centre.x() - half, centre.y() - half), head)
        else:
            features.hair_back(painter, centre, r, colours)
            features.head(painter, centre, r, colours)
            features.hair_front(painter, centre, r, colours)
        features.eyes(painter, centre, r, colours, pose)
        features.brows(painter, centre, r, colours, pose)
        features.mouth(painter, centre, r, colours, pose)
    paint_marks(painter, rect, centre, r, colours, pose, decorations=decorations, bare=bare)
    painter.restore()


def paint_marks(painter: QPainter, rect: QRectF, centre: QPointF, r: float,
                colours: FaceColours, pose: FacePose, *, decorations: bool = True,
                bare: bool = False) -> None:
    """What a state adds over any face: thinking dots, the muted or failed tint and badge."""
    if decorations and pose.state is AssistantState.THINKING:
        marks.thinking_dots(painter, centre, r, colours, pose)
    if pose.state is AssistantState.MUTED:
        _tint(painter, rect, QColor(8, 9, 14, 130), bare)
        if decorations:
            marks.mic_off_badge(painter, centre, r)
    if pose.state is AssistantState.ERROR:
        _tint(painter, rect, QColor(200, 30, 50, 60), bare)
        if decorations:
            marks.error_badge(painter, rect, centre, r, pose.message)


def _tint(painter: QPainter, rect: QRectF, colour: QColor, bare: bool) -> None:
    """A muted or failed face is tinted; ``bare``, only where the face itself is painted
    (the desktop around it stays clear)."""
    if bare:
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceAtop)
    marks.overlay(painter, rect, colour)
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)


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
    features.hair_back(painter, centre, r, colours)
    features.head(painter, centre, r, colours)
    features.hair_front(painter, centre, r, colours)
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


def render_thumbnail(style: AvatarStyle, size: int = 48, ratio: float = 1.0) -> QPixmap:
    """A static, undecorated face for the persona list (rendered once per persona)."""
    px = max(1, round(size * ratio))
    image = QImage(px, px, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    paint_face(painter, QRectF(0, 0, px, px), FaceColours.from_style(style), FacePose(),
               decorations=False)
    painter.end()
    pixmap = QPixmap.fromImage(image)
    pixmap.setDevicePixelRatio(ratio)
    return pixmap
