"""The import dialog's "Sprite sheet" row: pick a gathered picture, set its columns and rows
(1 x 1: a single picture), and see it with the grid and each cell's number drawn over."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from app.personas.avatar_layers import AvatarFileError
from app.personas.avatar_sheets import MAX_SHEET_GRID, SpriteSheet
from app.ui.layered_avatar import read_picture

THUMB = 200
"""The thumbnail's longer side in pixels."""


def grid_thumbnail(image: QImage, columns: int, rows: int) -> QPixmap:
    """``image`` at most THUMB pixels wide or high, the grid and cell numbers drawn over."""
    if image.isNull():
        return QPixmap()
    thumb = QPixmap.fromImage(image.scaled(THUMB, THUMB, Qt.AspectRatioMode.KeepAspectRatio,
                                           Qt.TransformationMode.SmoothTransformation))
    painter = QPainter(thumb)
    painter.setPen(QPen(QColor(255, 64, 160), 1))
    cell_w, cell_h = thumb.width() / columns, thumb.height() / rows
    for index in range(columns * rows):
        row, column = divmod(index, columns)
        box = QRectF(column * cell_w, row * cell_h, cell_w, cell_h)
        painter.drawRect(box.adjusted(0, 0, -1, -1))
        if columns * rows > 1:
            painter.drawText(box.adjusted(3, 1, 0, 0), str(index))
    painter.end()
    return thumb


class SheetRow(QWidget):
    """Emits ``regridded(file, columns, rows)`` when the user changes a picture's grid."""

    regridded = Signal(str, int, int)

    def __init__(self, folder: Path, names: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder = folder
        self.file = QComboBox()
        self.file.addItems(names)
        self.columns, self.rows = QSpinBox(), QSpinBox()
        for spin, tip in ((self.columns, "Columns"), (self.rows, "Rows")):
            spin.setRange(1, MAX_SHEET_GRID)
            spin.setToolTip(f"{tip} of the sprite sheet (1 x 1: a single picture)")
        self.thumb = QLabel()
        self._sheets: dict[str, SpriteSheet] = {}
        self._images: dict[str, QImage] = {}
        row = QHBoxLayout()
        row.addWidget(self.file, 1)
        row.addWidget(self.columns)
        row.addWidget(QLabel("x"))
        row.addWidget(self.rows)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(row)
        outer.addWidget(self.thumb)
        self.file.currentTextChanged.connect(self._show_file)
        self.columns.valueChanged.connect(self._spun)
        self.rows.valueChanged.connect(self._spun)

    def set_sheets(self, sheets: dict[str, SpriteSheet]) -> None:
        """The grids now (by file), shown for the current picture; a sheet is picked
        first when no sheet is shown."""
        self._sheets = {sheet.file: sheet for sheet in sheets.values()}
        if self.file.currentText() not in self._sheets and self._sheets:
            self.file.setCurrentText(next(iter(self._sheets)))
        self._show_file(self.file.currentText())

    def grid(self) -> tuple[int, int]:
        return self.columns.value(), self.rows.value()

    def _show_file(self, file: str) -> None:
        sheet = self._sheets.get(file)
        for spin, value in ((self.columns, sheet.columns if sheet else 1),
                            (self.rows, sheet.rows if sheet else 1)):
            spin.blockSignals(True)
            spin.setValue(value)
            spin.blockSignals(False)
        self._draw()

    def _spun(self) -> None:
        self._draw()
        self.regridded.emit(self.file.currentText(), *self.grid())

    def _image(self, file: str) -> QImage:
        """The picture, decoded once (checked like any avatar picture; a bad one: null)."""
        if file not in self._images:
            try:
                self._images[file] = read_picture(self.folder / file, file)
            except AvatarFileError:
                self._images[file] = QImage()
        return self._images[file]

    def _draw(self) -> None:
        file = self.file.currentText()
        image = self._image(file) if file else QImage()
        thumb = grid_thumbnail(image, *self.grid())
        self.thumb.setPixmap(thumb)
        self.thumb.setMinimumSize(thumb.size())  # a scrolled form would squeeze it
