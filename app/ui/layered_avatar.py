"""Paint a layered-PNG avatar (``app.personas.avatar_layers``) and a card's picture, alive.

``load_layers`` checks the files (sizes, signatures: the persona package) and their
dimensions (Qt's reader, before decoding) and decodes them once; a sprite sheet's cells
are cut out then, so a cell is drawn exactly like a separate picture. ``LayeredPainter`` keeps
each picture scaled to the widget's size (once per size), so a frame is a few pixmap draws:
the base (or the current feeling's variant) breathing with a 1.5 % vertical stretch from
its feet, the mouth for the opening and lip-sync shape, the closed eyes during a blink.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QImageReader, QPainter, QPixmap, QRadialGradient

from app.core.emotion import Emotion
from app.core.events import AssistantState
from app.personas.avatar_layers import (
    MAX_LAYER_SIDE,
    AvatarFileError,
    AvatarLayers,
    check_layer_files,
)
from app.personas.avatar_sheets import SheetError, is_cell, parse_cell
from app.personas.model import Persona
from app.ui import face_marks as marks
from app.ui.face_pose import FaceColours, FacePose

if TYPE_CHECKING:
    from app.personas.loader import PersonaLibrary
    from app.ui.avatar import AvatarWidget

BREATH = 0.015
"""How much the layered avatar stretches up with each breath (a fraction of its height)."""
DEFAULT_MOUTH_AT = (0.5, 0.7)
"""Where a card picture's mouth is, as fractions of its width and height."""


@dataclass
class LayerImages:
    """The decoded pictures of one layered avatar, by their values in ``layers`` (a file
name or a sheet's cell)."""

    layers: AvatarLayers
    images: dict[str, QImage] = field(default_factory=dict)

    @property
    def aspect(self) -> float:
        base = self.images[self.layers.base]
        return base.width() / max(1, base.height())


def read_picture(path: Path, label: str) -> QImage:
    """Decode one picture after checking its dimensions; raises AvatarFileError."""
    reader = QImageReader(str(path))
    size = reader.size()
    if not size.isValid():
        raise AvatarFileError(f"avatar picture {label} is not a picture that can be shown")
    if size.width() > MAX_LAYER_SIDE or size.height() > MAX_LAYER_SIDE:
        raise AvatarFileError(f"avatar picture {label} is {size.width()}x{size.height()} "
                              f"pixels; the limit is {MAX_LAYER_SIDE} on each side")
    image = reader.read()
    if image.isNull():
        raise AvatarFileError(f"avatar picture {label} cannot be decoded: "
                              f"{reader.errorString()}")
    return image.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)


def load_layers(folder: Path, layers: AvatarLayers) -> LayerImages:
    """Check and decode every picture ``layers`` names; raises AvatarFileError."""
    paths = check_layer_files(folder, layers)
    files = {name: read_picture(path, name) for name, path in zip(layers.files(), paths,
                                                                  strict=True)}
    images: dict[str, QImage] = {}
    for value in layers.pictures():
        if not is_cell(value):
            images[value] = files[value]
            continue
        name, index = parse_cell(value)
        sheet = layers.sheets[name]
        picture = files[sheet.file]
        try:
            x, y, w, h = sheet.cell_box(index, picture.width(), picture.height(), sheet.file)
        except SheetError as exc:
            raise AvatarFileError(str(exc)) from exc
        images[value] = picture.copy(x, y, w, h)
    return LayerImages(layers, images)


def breath_stretch(t: float) -> float:
    """The vertical scale of a breathing picture at ``t`` (1.0 .. 1 + BREATH)."""
    return 1.0 + BREATH * 0.5 * (1.0 - math.cos(t * 1.6))


class LayeredPainter:
    """Paints one ``LayerImages`` into a widget, caching the scaled pictures per size."""

    def __init__(self, images: LayerImages) -> None:
        self.images = images
        self._key: tuple[float, float, float] | None = None
        self._scaled: dict[str, QPixmap] = {}
        self.scalings = 0
        """How many times the pictures were scaled (tests: once per size)."""

    def _frame(self, rect: QRectF) -> QRectF:
        """Where the base stands: as large as fits 92 % of the rect, feet at the bottom."""
        aspect = self.images.aspect
        height = min(rect.height() * 0.92, rect.width() * 0.92 / aspect)
        width = height * aspect
        return QRectF(rect.center().x() - width / 2, rect.bottom() - height, width, height)

    def _pixmaps(self, frame: QRectF, ratio: float) -> dict[str, QPixmap]:
        key = (frame.width(), frame.height(), ratio)
        if key != self._key:
            w = max(1, round(frame.width() * ratio))
            h = max(1, round(frame.height() * ratio))
            self._scaled = {}
            for name, image in self.images.images.items():
                pixmap = QPixmap.fromImage(image.scaled(
                    w, h, Qt.AspectRatioMode.IgnoreAspectRatio,
                    Qt.TransformationMode.SmoothTransformation))
                pixmap.setDevicePixelRatio(ratio)
                self._scaled[name] = pixmap
            self._key = key
            self.scalings += 1
        return self._scaled

    def names(self, pose: FacePose, emotion: Emotion | None) -> list[str]:
        """The pictures drawn for ``pose``, bottom first."""
        layers = self.images.layers
        if pose.state is AssistantState.THINKING and layers.expression(Emotion.THINKING):
            emotion = Emotion.THINKING
        drawn = [layers.expression(emotion) or layers.base]
        mouth = layers.mouth(pose.mouth, pose.viseme)
        if mouth is not None:
            drawn.append(mouth)
        if pose.blink > 0.5 and layers.eyes_closed is not None:
            drawn.append(layers.eyes_closed)
        return drawn

    def paint(self, painter: QPainter, rect: QRectF, colours: FaceColours, pose: FacePose,
              emotion: Emotion | None, ratio: float) -> None:
        frame = self._frame(rect)
        scaled = self._pixmaps(frame, ratio)
        stretch = breath_stretch(pose.t)
        target = QRectF(frame.left(), frame.bottom() - frame.height() * stretch,
                        frame.width(), frame.height() * stretch)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        if pose.state is AssistantState.THINKING or pose.state is AssistantState.LISTENING:
            centre = QPointF(target.center().x(), target.top() + target.height() * 0.3)
            marks.ring(painter, centre, min(target.width(), target.height()) * 0.35, colours,
                       pose)
        for name in self.names(pose, emotion):
            pixmap = scaled[name]
            painter.drawPixmap(target, pixmap, QRectF(pixmap.rect()))
        painter.restore()


def paint_picture_mouth(painter: QPainter, square: QRectF, opening: float,
                        at: tuple[float, float] | None) -> None:
    """A soft dark mouth over a card's picture (``square`` is where it is drawn), as wide
    as a tenth of the picture and opening with the level; nothing when closed."""
    if opening < 0.03:
        return
    x, y = at or DEFAULT_MOUTH_AT
    centre = QPointF(square.left() + square.width() * x, square.top() + square.height() * y)
    rx = square.width() * 0.05
    ry = square.height() * (0.008 + 0.03 * min(1.0, opening))
    gradient = QRadialGradient(centre, max(rx, ry))
    gradient.setColorAt(0.0, QColor(40, 12, 18, 200))
    gradient.setColorAt(0.7, QColor(60, 18, 24, 150))
    gradient.setColorAt(1.0, QColor(60, 18, 24, 0))
    painter.save()
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(gradient)
    painter.drawEllipse(centre, rx, ry)
    painter.restore()


def persona_layers(folder: Path | None,
                   persona: Persona) -> tuple[LayerImages | None, str | None]:
    """A persona's layered avatar, or None and a notice saying why it is not shown."""
    layers = persona.avatar.layers
    if layers is None or folder is None:
        return None, None
    try:
        return load_layers(folder, layers), None
    except AvatarFileError as exc:
        return None, f"{persona.name}'s layered avatar is not shown: {exc}"


def dress_avatar(avatar: AvatarWidget, library: PersonaLibrary, persona: Persona) -> str | None:
    """The persona's look on ``avatar``: colours, resting face, picture and layers; the one
    line to show when its layered pictures could not load (None when all is well)."""
    from app.ui.sidebar import load_picture

    avatar.set_avatar_style(persona.avatar)
    avatar.set_resting(persona.expression.resting)
    avatar.set_picture(load_picture(library.image_path(persona), 512))
    layers, problem = persona_layers(library.folder(persona), persona)
    avatar.set_layers(layers)
    return problem
