"""A layered avatar drawn from sprite sheets: each cell is cut out once and drawn like a
separate picture (lip-sync shapes, a blink); a sheet that does not fit its grid, or is too
big, is refused with one line; a zip with a sheet imports into a persona that speaks."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter
from pytestqt.qtbot import QtBot

from app.core.events import AssistantState
from app.core.mouth_track import MouthTrack
from app.core.telemetry import MouthCue
from app.core.visemes import Viseme
from app.personas.loader import load_persona_file
from app.personas.model import Persona
from app.ui.avatar import AvatarWidget
from app.ui.avatar_import_dialog import AvatarImportDialog, StagedAvatar
from app.ui.layered_avatar import persona_layers
from app.ui.lip_sync import LEAD_S
from app.ui.persona_editor import EditorContext, PersonaEditor
from tests.ui import avatar_art

W, H = avatar_art.W, avatar_art.H
CELL_COLOURS = ("#202020", "#e02020", "#20c020", "#2040e0", "#e0c020", "#c020c0")
"""One colour per lip-sync shape, in Viseme order (closed, a, i, u, e, o)."""
MOUTH_BLOCK = (70, 160, 100, 40)
"""Where each mouth cell paints its colour (x, y, w, h in the 240x300 picture)."""
EYE_BLOCK = (80, 110, 80, 36)
LIDS = "#00a0a0"


def _block(colour: str, box: tuple[int, int, int, int]) -> QImage:
    image = QImage(W, H, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    image_painter = QPainter(image)
    image_painter.fillRect(*box, QColor(colour))
    image_painter.end()
    return image


def _sheet(cells: list[QImage], columns: int) -> QImage:
    rows = -(-len(cells) // columns)
    sheet = QImage(W * columns, H * rows, QImage.Format.Format_ARGB32_Premultiplied)
    sheet.fill(Qt.GlobalColor.transparent)
    painter = QPainter(sheet)
    for index, cell in enumerate(cells):
        row, column = divmod(index, columns)
        painter.drawImage(column * W, row * H, cell)
    painter.end()
    return sheet


def _persona(folder: Path) -> Persona:
    """A base and closed eyes from a 2-cell strip, six mouths from a 3x2 sheet."""
    folder.mkdir(parents=True, exist_ok=True)
    mouths = [_block(colour, MOUTH_BLOCK) for colour in CELL_COLOURS]
    assert _sheet(mouths, 3).save(str(folder / "mouths.png"))
    assert _sheet([avatar_art.base(), _block(LIDS, EYE_BLOCK)], 2).save(
        str(folder / "face_strip.png"))
    layers = {"base": "sheet:face:0", "eyes_closed": "sheet:face:1",
              "mouths": {v.value: f"sheet:mouths:{i}" for i, v in enumerate(Viseme)},
              "sheets": {"mouths": {"file": "mouths.png", "columns": 3, "rows": 2},
                         "face": {"file": "face_strip.png", "columns": 2}}}
    return Persona.model_validate({"id": "s", "name": "Sheet", "system_prompt": "s",
                                   "avatar": {"layers": layers}})


def _avatar(qtbot: QtBot) -> AvatarWidget:
    avatar = AvatarWidget(seed=3)
    qtbot.addWidget(avatar)
    avatar.resize(260, 260)
    avatar.show()
    qtbot.waitExposed(avatar)
    return avatar


def _at(image: QImage, box: tuple[int, int, int, int]) -> QColor:
    """The widget's colour at the middle of ``box`` (picture coordinates)."""
    height = 260 * 0.92  # the layered painter's frame: 92 % of the widget, feet at the bottom
    scale = height / H
    x = 130 - W * scale / 2 + (box[0] + box[2] / 2) * scale
    y = 260 - height + (box[1] + box[3] / 2) * scale
    return image.pixelColor(round(x), round(y))


def _near(a: QColor, b: QColor) -> bool:
    return max(abs(a.red() - b.red()), abs(a.green() - b.green()),
               abs(a.blue() - b.blue())) <= 12


def test_a_speaking_sheet_shows_each_shapes_cell_and_blinks(qtbot: QtBot, tmp_path: Path) -> None:
    layers, notice = persona_layers(tmp_path, _persona(tmp_path))
    assert notice is None and layers is not None
    mouths = QImage(str(tmp_path / "mouths.png"))
    for index in range(6):  # each cell is the sheet's pixels, cut once
        row, column = divmod(index, 3)
        assert layers.images[f"sheet:mouths:{index}"] == mouths.copy(
            column * W, row * H, W, H).convertToFormat(layers.images["sheet:face:0"].format())
    assert layers.aspect == pytest.approx(W / H)  # the base is a cell, not the strip

    avatar = _avatar(qtbot)
    avatar.set_layers(layers)
    avatar.set_state(AssistantState.SPEAKING)
    now = [4.0]
    avatar.play_clock = lambda: now[0]
    shapes = [Viseme.A, Viseme.I, Viseme.U, Viseme.E, Viseme.O, Viseme.CLOSED]
    track = MouthTrack(openings=tuple(0.0 if v is Viseme.CLOSED else 0.8 for v in shapes
                                      for _ in range(10)),
                       visemes=tuple(v for v in shapes for _ in range(10)))
    avatar.mouth_cue(MouthCue(1, 0, track, at=5.0))  # a sentence sounding from 5.0 s
    for k, viseme in enumerate(shapes):
        at = 5.0 + (k * 10 + 5) * track.hop_s  # the middle of the shape's 10 hops
        now[0] = at - LEAD_S
        avatar.advance(at)
        assert avatar.viseme is viseme
        shown = _at(avatar.grab().toImage(), MOUTH_BLOCK)
        colour = CELL_COLOURS[list(Viseme).index(viseme)]
        assert _near(shown, QColor(colour)), (viseme, shown.name(), colour)

    avatar.freeze(10.0, blink=0.0, mouth=0.0, viseme=Viseme.CLOSED)
    open_eyes = _at(avatar.grab().toImage(), EYE_BLOCK)
    avatar.freeze(10.0, blink=1.0, mouth=0.0, viseme=Viseme.CLOSED)
    assert not _near(open_eyes, QColor(LIDS))
    assert _near(_at(avatar.grab().toImage(), EYE_BLOCK), QColor(LIDS))
    painter = avatar.layered
    assert painter is not None and painter.scalings == 1  # cells scaled once, not per frame


@pytest.mark.parametrize(("size", "grid", "words"), [
    ((301, 200), (3, 2), "mouths.png is 301x200 pixels, which does not divide into 3 columns"),
    ((4200, 100), (6, 1), "mouths.png is 4200x100 pixels; the limit is 4096"),
    ((60, 60), (10, 1), "cells would be 6x60 pixels"),
])
def test_a_bad_grid_or_an_oversized_sheet_is_one_line(
        tmp_path: Path, size: tuple[int, int], grid: tuple[int, int], words: str) -> None:
    image = QImage(*size, QImage.Format.Format_ARGB32)
    image.fill(0)
    assert image.save(str(tmp_path / "mouths.png"))
    assert avatar_art.base().save(str(tmp_path / "base.png"))
    persona = Persona.model_validate({
        "id": "s", "name": "Sheet", "system_prompt": "s", "avatar": {"layers": {
            "base": "base.png", "mouth_open": "sheet:m:0",
            "sheets": {"m": {"file": "mouths.png", "columns": grid[0], "rows": grid[1]}}}}})
    layers, notice = persona_layers(tmp_path, persona)
    assert layers is None and notice is not None
    assert words in notice and "\n" not in notice


def _editor(qtbot: QtBot, folder: Path) -> PersonaEditor:
    editor = PersonaEditor(None, EditorContext(folder=folder, taken_ids=frozenset()))
    qtbot.addWidget(editor)
    editor.name.setText("Strip")
    return editor


def test_import_a_zip_with_a_mouth_sheet_into_a_speaking_persona(qtbot: QtBot,
                                                                 tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    assert avatar_art.base().save(str(pack / "idle.png"))
    assert avatar_art.eyes_closed().save(str(pack / "blink.png"))
    assert _sheet([_block(c, MOUTH_BLOCK) for c in CELL_COLOURS], 6).save(
        str(pack / "mouths.png"))
    source = tmp_path / "pack.zip"
    with zipfile.ZipFile(source, "w") as archive:
        for path in sorted(pack.iterdir()):
            archive.write(path, f"model/{path.name}")
    folder = tmp_path / "personas"
    editor = _editor(qtbot, folder)
    dialog = editor.face_rows.import_avatar(source, confirm=False)
    assert dialog is not None and dialog.preview.layers is not None
    assert dialog.sheet_row.file.currentText() == "mouths.png"
    assert dialog.sheet_row.grid() == (6, 1)  # six cells of the pack's frame size
    assert dialog.boxes["lips_u"].currentText() == "mouths.png [cell 3]"
    dialog.choose("mouth_open", "sheet:mouths:1")  # the user adds a plain open mouth
    assert not dialog.picked.pixmap().isNull()  # that cell, shown beside the preview

    editor.save()
    assert editor.saved_path is not None, editor.error.text()
    persona = load_persona_file(editor.saved_path)
    saved = persona.avatar.layers
    assert saved is not None
    assert saved.sheets["mouths"].file == "avatar/strip/mouths.png"
    assert saved.mouth_open == "sheet:mouths:1" and saved.mouths["e"] == "sheet:mouths:4"
    layers, notice = persona_layers(folder, persona)
    assert notice is None and layers is not None
    avatar = _avatar(qtbot)
    avatar.set_layers(layers)
    avatar.set_state(AssistantState.SPEAKING)
    for viseme, colour in zip(Viseme, CELL_COLOURS, strict=True):
        avatar.freeze(10.0, mouth=0.0 if viseme is Viseme.CLOSED else 0.8, viseme=viseme)
        assert _near(_at(avatar.grab().toImage(), MOUTH_BLOCK), QColor(colour)), viseme


def test_the_dialog_sets_a_grid_and_offers_its_cells(qtbot: QtBot, tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    assert avatar_art.base().save(str(pack / "idle.png"))
    assert _sheet([avatar_art.mouth(0), avatar_art.mouth(0.5), avatar_art.mouth(1.0),
                   avatar_art.eyes_closed()], 2).save(str(pack / "parts.png"))
    staged = StagedAvatar(pack)
    assert set(staged.sheets) == {"parts"}  # a 2x2 grid of the pack's frame size
    dialog = AvatarImportDialog(staged)
    qtbot.addWidget(dialog)
    assert dialog.sheet_row.grid() == (2, 2)
    assert dialog.boxes["base"].currentText() == "idle.png"
    dialog.choose("eyes_closed", "sheet:parts:3")
    dialog.choose("mouth_open", "sheet:parts:2")
    assert dialog.ok.isEnabled() and dialog.preview.layers is not None
    dialog.sheet_row.columns.setValue(7)  # the user tries seven columns
    assert dialog.error.text() == ("avatar sheet parts.png is 480x600 pixels, which does not "
                                   "divide into 7 columns and 2 rows")
    assert not dialog.ok.isEnabled()
    dialog.sheet_row.columns.setValue(2)
    assert dialog.ok.isEnabled(), dialog.error.text()
    assert dialog.roles()["mouth_open"] == "sheet:parts:2"  # kept through the regrids
    dialog.sheet_row.rows.setValue(64)  # 128 cells, refused: the mapping stays
    dialog.sheet_row.columns.setValue(64)
    assert dialog.error.text() == "avatar sheet parts.png: 64x64 is 4096 cells; the limit is 256"
    assert dialog.boxes["base"].count() == 2 + 128
    dialog.sheet_row.columns.setValue(2)
    dialog.sheet_row.rows.setValue(1)  # two cells: 2 and 3 are gone, and their roles
    assert dialog.ok.isEnabled()
    assert "mouth_open" not in dialog.roles() and "eyes_closed" not in dialog.roles()
    assert [dialog.boxes["base"].itemText(i) for i in range(dialog.boxes["base"].count())] == [
        "(none)", "idle.png", "parts.png [cell 0]", "parts.png [cell 1]"]
