"""Sprite sheets for a layered avatar: one picture holding several frames in a grid.

A sheet is declared under ``[avatar.layers.sheets.NAME]`` (``file``, ``columns``, ``rows``)
and any layer picture may then be ``"sheet:NAME:INDEX"``, a cell counted row by row from 0.
The sheet file keeps to the caps of any picture; its size must divide by the grid into
cells of at least ``MIN_CELL_SIDE`` pixels (checked by the UI, which decodes it, through
``cell_box``). No Qt here.
"""

from __future__ import annotations

import re
import struct

from pydantic import BaseModel, ConfigDict, Field, model_validator

SHEET_PREFIX = "sheet:"
MAX_SHEET_GRID = 64
"""Columns and rows a sheet may have."""
MAX_SHEET_CELLS = 256
"""Cells in all (each is a choice in the import dialog's lists)."""
MIN_CELL_SIDE = 8
"""A cell's width and height in pixels, at least (a 4096-pixel strip of 1-pixel cells is
no avatar)."""
_SHEET_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
_REFERENCE = re.compile(r"sheet:([^:]*):(.*)")


class SheetError(ValueError):
    """A sheet's grid does not fit its picture: one line naming it."""


def check_sheet_name(name: str) -> str:
    if not _SHEET_NAME.fullmatch(name):
        raise ValueError(f"avatar.layers.sheets: {name[:40]!r} is not a sheet name (letters, "
                         f"digits, '-' and '_', at most 40)")
    return name


def is_cell(value: str) -> bool:
    """Whether a layer value names a sheet's cell rather than a file."""
    return value.startswith(SHEET_PREFIX)


def parse_cell(value: str) -> tuple[str, int]:
    """``"sheet:NAME:INDEX"`` as (NAME, INDEX); raises ValueError with the expected form."""
    match = _REFERENCE.fullmatch(value)
    if match is None or not match.group(2).isdecimal() or len(match.group(2)) > 4:
        raise ValueError(f"avatar layer {value[:60]!r}: expected \"sheet:NAME:INDEX\" (a cell "
                         f"of a sheet, counted from 0 row by row)")
    return check_sheet_name(match.group(1)), int(match.group(2))


def check_grid(file: str, columns: int, rows: int) -> None:
    """Raises SheetError when a grid has more than MAX_SHEET_CELLS cells."""
    if columns * rows > MAX_SHEET_CELLS:
        raise SheetError(f"avatar sheet {file}: {columns}x{rows} is {columns * rows} cells; "
                         f"the limit is {MAX_SHEET_CELLS}")


def cell_reference(sheet: str, index: int) -> str:
    return f"{SHEET_PREFIX}{sheet}:{index}"


class SpriteSheet(BaseModel):
    """``[avatar.layers.sheets.NAME]``: a picture cut into ``columns`` x ``rows`` cells."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    columns: int = Field(default=1, ge=1, le=MAX_SHEET_GRID)
    rows: int = Field(default=1, ge=1, le=MAX_SHEET_GRID)

    @model_validator(mode="after")
    def _grid(self) -> SpriteSheet:
        check_grid(self.file, self.columns, self.rows)
        return self

    @property
    def cells(self) -> int:
        return self.columns * self.rows

    def cell_box(self, index: int, width: int, height: int,
                 label: str) -> tuple[int, int, int, int]:
        """Cell ``index``'s (x, y, width, height) in a ``width`` x ``height`` picture;
        raises SheetError when the grid does not divide it or the cells are too small."""
        if width % self.columns or height % self.rows:
            raise SheetError(f"avatar sheet {label} is {width}x{height} pixels, which does "
                             f"not divide into {self.columns} columns and {self.rows} rows")
        cell_w, cell_h = width // self.columns, height // self.rows
        if min(cell_w, cell_h) < MIN_CELL_SIDE:
            raise SheetError(f"avatar sheet {label}: its cells would be {cell_w}x{cell_h} "
                             f"pixels; each side needs at least {MIN_CELL_SIDE}")
        if not 0 <= index < self.cells:
            raise SheetError(f"avatar sheet {label} has {self.cells} cells; there is no "
                             f"cell {index}")
        row, column = divmod(index, self.columns)
        return column * cell_w, row * cell_h, cell_w, cell_h


def png_size(head: bytes) -> tuple[int, int] | None:
    """A PNG's (width, height) from its first 24 bytes; None for anything else."""
    if len(head) < 24 or not head.startswith(b"\x89PNG\r\n\x1a\n") or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def propose_grid(name: str, size: tuple[int, int] | None,
                 frame: tuple[int, int] | None = None) -> tuple[int, int] | None:
    """(columns, rows) when a picture looks like a sheet: a whole grid (2 cells or more) of
    ``frame``-sized cells (the pack's usual picture size), a strip whose long side is an
    exact multiple of its short side (square cells), or a name saying sheet/sprite/strip
    (a square one guessed 2x2); None for a single picture."""
    named = re.search(r"sheet|sprite|strip|atlas|frames", name.lower()) is not None
    if size is None:
        return (2, 1) if named else None
    width, height = size
    if frame is not None and min(frame) >= MIN_CELL_SIDE and width % frame[0] == 0 \
            and height % frame[1] == 0:
        columns, rows = width // frame[0], height // frame[1]
        if columns * rows >= 2 and max(columns, rows) <= MAX_SHEET_GRID:
            return columns, rows
    if min(width, height) < MIN_CELL_SIDE:
        return None
    for long, short, flip in ((width, height, False), (height, width, True)):
        count = long // short
        if long % short == 0 and 2 <= count <= MAX_SHEET_GRID:
            return (1, count) if flip else (count, 1)
    if named and width % 2 == 0 and height % 2 == 0:
        return 2, 2
    return None
