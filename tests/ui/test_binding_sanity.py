"""The avatar paints ~2,000 Qt calls a second; a binding that leaks references to None on
each call (PySide6 6.12.0 on Python 3.11 does) crashes the app within seconds."""

from __future__ import annotations

import sys

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter, QPen


def test_painting_does_not_release_none() -> None:
    image = QImage(64, 64, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    before = sys.getrefcount(None)
    for _ in range(2000):
        painter.setPen(QPen(QColor("#ff8800")))
        painter.drawEllipse(QRectF(4, 4, 20, 20))
    after = sys.getrefcount(None)
    painter.end()
    assert after >= before - 10, f"None lost {before - after} references"
