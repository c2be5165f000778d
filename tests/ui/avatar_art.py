"""Simple test art for layered avatars, drawn with QPainter: a round-faced character and
its mouth shapes, closed eyes and a happy variant, each a full-size transparent PNG."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen

W, H = 240, 300
SKIN, HAIR, SHIRT, INK = "#f6d3b3", "#5b3a8c", "#3fa7a0", "#2a1a2e"


def _canvas(draw: Callable[[QPainter], None]) -> QImage:
    image = QImage(W, H, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    draw(painter)
    painter.end()
    return image


def _body(p: QPainter, cheeks: bool = False) -> None:
    p.setBrush(QColor(SHIRT))
    p.drawRoundedRect(QRectF(40, 220, 160, 110), 60, 60)
    p.setBrush(QColor(HAIR))
    p.drawEllipse(QRectF(38, 30, 164, 180))
    p.setBrush(QColor(SKIN))
    p.drawEllipse(QRectF(55, 60, 130, 150))
    p.setBrush(QColor(HAIR))
    fringe = QPainterPath(QPointF(50, 110))
    fringe.cubicTo(70, 40, 170, 40, 190, 110)
    fringe.cubicTo(160, 80, 120, 95, 50, 110)
    p.drawPath(fringe)
    if cheeks:
        p.setBrush(QColor(255, 120, 140, 120))
        p.drawEllipse(QRectF(66, 150, 26, 14))
        p.drawEllipse(QRectF(148, 150, 26, 14))


def _eyes(p: QPainter, happy: bool = False) -> None:
    if happy:
        p.setPen(QPen(QColor(INK), 5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawArc(QRectF(82, 122, 26, 20), 0, 180 * 16)
        p.drawArc(QRectF(132, 122, 26, 20), 0, 180 * 16)
        return
    p.setBrush(QColor(INK))
    p.drawEllipse(QRectF(86, 118, 18, 24))
    p.drawEllipse(QRectF(136, 118, 18, 24))
    p.setBrush(QColor("white"))
    p.drawEllipse(QRectF(92, 122, 6, 6))
    p.drawEllipse(QRectF(142, 122, 6, 6))


def base(happy: bool = False) -> QImage:
    return _canvas(lambda p: (_body(p, cheeks=happy), _eyes(p, happy)))


def mouth(opening: float) -> QImage:
    def draw(p: QPainter) -> None:
        if opening == 0:
            p.setPen(QPen(QColor(INK), 4, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            p.drawLine(QPointF(110, 176), QPointF(130, 176))
            return
        p.setBrush(QColor("#8a2232"))
        p.drawEllipse(QRectF(120 - 13, 176 - 16 * opening, 26, 32 * opening))
        p.setBrush(QColor("#ff8fa0"))
        p.drawEllipse(QRectF(112, 176 + 4 * opening, 16, 10 * opening))
    return _canvas(draw)


def eyes_closed() -> QImage:
    def draw(p: QPainter) -> None:
        p.setBrush(QColor(SKIN))
        p.drawRect(QRectF(82, 114, 78, 32))
        p.setPen(QPen(QColor(INK), 4, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.drawLine(QPointF(86, 132), QPointF(104, 134))
        p.drawLine(QPointF(136, 134), QPointF(154, 132))
    return _canvas(draw)


def write_pack(folder: Path) -> Path:
    """A PNGtuber-style folder with common file names."""
    folder.mkdir(parents=True, exist_ok=True)
    images = {"idle.png": base(), "mouth_closed.png": mouth(0), "mouth_half.png": mouth(0.5),
              "talk.png": mouth(1.0), "blink.png": eyes_closed(), "happy.png": base(True)}
    for name, image in images.items():
        assert image.save(str(folder / name))
    return folder


def card_picture() -> QImage:
    """A square picture like a character card's, with no mouth of its own."""
    image = QImage(256, 256, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("#c9e4f2"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.drawImage(QRectF(8, 0, 240, 300), base())
    painter.end()
    return image
