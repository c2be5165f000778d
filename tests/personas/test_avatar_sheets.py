"""Sprite sheets in [avatar.layers]: cells named "sheet:NAME:INDEX", checked without Qt;
imported packs' sheets recognised, given a grid and their cells roles."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from app.core.visemes import Viseme
from app.personas.avatar_import import describe, guess_roles, guess_sheets, install, regrid
from app.personas.avatar_layers import MAX_LAYER_BYTES, AvatarFileError, check_layer_files
from app.personas.avatar_sheets import SheetError, SpriteSheet, png_size, propose_grid
from app.personas.loader import load_persona_file
from app.personas.model import Persona
from app.personas.writer import save_persona

MOUTHS = {"file": "avatar/p/mouths.png", "columns": 3, "rows": 2}


def persona(**layers: object) -> Persona:
    return Persona.model_validate({"id": "p", "name": "P", "system_prompt": "s",
                                   "avatar": {"layers": layers}})


def png_head(width: int, height: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + struct.pack(">II", width, height)


def test_cells_round_trip_through_the_persona_file(tmp_path: Path) -> None:
    shapes = {v.value: f"sheet:mouths:{i}" for i, v in enumerate(Viseme)}
    p = persona(base="avatar/p/base.png", eyes_closed="sheet:eyes:1", mouths=shapes,
                sheets={"mouths": MOUTHS, "eyes": {"file": "avatar/p/eyes.png", "columns": 2},
                        "spare": {"file": "avatar/p/unused.png"}})
    loaded = load_persona_file(save_persona(p, tmp_path))
    layers = loaded.avatar.layers
    assert loaded == p and layers is not None
    assert layers.sheets["mouths"] == SpriteSheet(file="avatar/p/mouths.png", columns=3,
                                                  rows=2)
    assert layers.mouth(0.8, Viseme.O) == "sheet:mouths:5"
    # the files to read: separate pictures, then the sheets used, as declared (not the spare)
    assert layers.files() == ["avatar/p/base.png", "avatar/p/mouths.png", "avatar/p/eyes.png"]


@pytest.mark.parametrize(("layers", "words"), [
    ({"base": "sheet:mouths:6", "sheets": {"mouths": MOUTHS}},
     "sheet mouths has 3x2 = 6 cells (0 to 5)"),
    ({"base": "sheet:faces:0", "sheets": {"mouths": MOUTHS}},
     "no [avatar.layers.sheets.faces] is declared"),
    ({"base": "sheet:mouths:-1", "sheets": {"mouths": MOUTHS}}, "expected \"sheet:NAME:INDEX\""),
    ({"base": "sheet:mouths", "sheets": {"mouths": MOUTHS}}, "expected \"sheet:NAME:INDEX\""),
    ({"base": "b.png", "mouths": {"a": "sheet:../x:1"}}, "is not a sheet name"),
    ({"base": "b.png", "sheets": {"m": {"file": "../m.png"}}}, "inside the persona's folder"),
    ({"base": "b.png", "sheets": {"m": {"file": "m.png", "columns": 0}}},
     "greater than or equal to 1"),
    ({"base": "b.png", "sheets": {"m": {"file": "m.png", "rows": 65}}},
     "less than or equal to 64"),
    ({"base": "b.png", "sheets": {"m": {"file": "m.png", "cols": 2}}}, "cols"),
])
def test_bad_sheets_and_cells_are_one_clear_line(layers: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        persona(**layers)


def test_a_sheet_must_divide_into_its_grid() -> None:
    sheet = SpriteSheet(file="m.png", columns=3, rows=2)
    assert sheet.cell_box(4, 300, 200, "m.png") == (100, 100, 100, 100)
    with pytest.raises(SheetError, match=re.escape("m.png is 301x200 pixels, which does not "
                                                   "divide into 3 columns and 2 rows")):
        sheet.cell_box(0, 301, 200, "m.png")
    with pytest.raises(SheetError, match=re.escape("cells would be 4x4 pixels")):
        sheet.cell_box(0, 12, 8, "m.png")


def test_a_sheet_file_keeps_the_caps_of_any_picture(tmp_path: Path) -> None:
    p = persona(base="sheet:m:0", sheets={"m": {"file": "m.png", "columns": 2}})
    layers = p.avatar.layers
    assert layers is not None
    (tmp_path / "m.png").write_bytes(png_head(64, 32) + b"\0" * MAX_LAYER_BYTES)
    with pytest.raises(AvatarFileError, match=re.escape("m.png is 4.0 MiB; the limit is 4 MiB")):
        check_layer_files(tmp_path, layers)


@pytest.mark.parametrize(("name", "size", "grid"), [
    ("mouths.png", (600, 100), (6, 1)),
    ("column.png", (100, 300), (1, 3)),
    ("idle.png", (240, 300), None),
    ("idle.png", (300, 300), None),
    ("face_sheet.png", (400, 400), (2, 2)),
    ("face_sheet.webp", None, (2, 1)),
    ("talk.webp", None, None),
    ("line.png", (4000, 4), None),  # cells too thin to be an avatar
])
def test_a_grid_is_proposed_for_what_looks_like_a_sheet(
        name: str, size: tuple[int, int] | None, grid: tuple[int, int] | None) -> None:
    assert propose_grid(name, size) == grid


def test_png_size_reads_the_header() -> None:
    assert png_size(png_head(640, 480)) == (640, 480)
    assert png_size(b"GIF89a" + b"\0" * 30) is None


def _stage(folder: Path, files: dict[str, bytes]) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return list(files)


def test_sheets_are_recognised_and_their_cells_given_roles(tmp_path: Path) -> None:
    names = _stage(tmp_path, {"idle.png": png_head(240, 300), "mouths.png": png_head(1440, 300),
                              "blink_strip.png": png_head(480, 300),
                              "happy.png": png_head(240, 300)})
    sheets = guess_sheets(tmp_path, names)
    assert sheets == {"mouths": SpriteSheet(file="mouths.png", columns=6),
                      "blink_strip": SpriteSheet(file="blink_strip.png", columns=2)}
    roles = guess_roles(names, sheets)
    assert roles == {"base": "idle.png", "happy": "happy.png",
                     "lips_closed": "sheet:mouths:0", "lips_a": "sheet:mouths:1",
                     "lips_i": "sheet:mouths:2", "lips_u": "sheet:mouths:3",
                     "lips_e": "sheet:mouths:4", "lips_o": "sheet:mouths:5",
                     "eyes_closed": "sheet:blink_strip:1"}
    layers = install(tmp_path, roles, tmp_path / "personas", "kit", sheets)
    assert layers.mouths["o"] == "sheet:mouths:5"
    assert layers.sheets["mouths"].file == "avatar/kit/mouths.png"
    assert sorted(p.name for p in (tmp_path / "personas/avatar/kit").iterdir()) == [
        "blink_strip.png", "happy.png", "idle.png", "mouths.png"]
    assert check_layer_files(tmp_path / "personas", layers)


def test_a_lone_sheet_gives_the_base_and_the_rest(tmp_path: Path) -> None:
    """Idle and talking by eyes open and closed, in a 2x2 sheet."""
    names = _stage(tmp_path, {"character_sheet.png": png_head(600, 600)})
    sheets = guess_sheets(tmp_path, names)
    assert sheets == {"character_sheet": SpriteSheet(file="character_sheet.png", columns=2,
                                                     rows=2)}
    assert guess_roles(names, sheets) == {"base": "sheet:character_sheet:0",
                                          "eyes_closed": "sheet:character_sheet:1",
                                          "mouth_open": "sheet:character_sheet:2"}


def test_the_base_falls_back_to_a_taken_picture_without_sheets() -> None:
    assert guess_roles(["blink.png", "talk.png"])["base"] == "blink.png"


def test_regridding_keeps_the_roles_that_still_fit() -> None:
    sheets = {"m": SpriteSheet(file="m.png", columns=6)}
    roles = {"base": "b.png", "lips_a": "sheet:m:1", "lips_o": "sheet:m:5"}
    roles, sheets = regrid(roles, sheets, "m.png", 3, 1)
    assert sheets == {"m": SpriteSheet(file="m.png", columns=3)}
    assert roles == {"base": "b.png", "lips_a": "sheet:m:1"}
    roles, sheets = regrid(roles, sheets, "b.png", 2, 1)  # the base was a sheet after all
    assert sheets["b"] == SpriteSheet(file="b.png", columns=2)
    assert roles["base"] == "sheet:b:0"
    roles, sheets = regrid(roles, sheets, "b.png", 1, 1)  # or not
    assert roles["base"] == "b.png" and "b" not in sheets
    assert describe(roles, "kit", sheets).sheets == {
        "m": SpriteSheet(file="avatar/kit/m.png", columns=3)}


def test_a_grid_of_the_packs_frame_size_is_a_sheet() -> None:
    assert propose_grid("mouths.png", (1440, 300), (240, 300)) == (6, 1)
    assert propose_grid("faces.png", (480, 600), (240, 300)) == (2, 2)
    assert propose_grid("idle.png", (240, 300), (240, 300)) is None
    assert propose_grid("mouths.png", (1440, 300)) is None  # no frame, no square cells


def test_lip_sync_shapes_alone_serve_the_level_too() -> None:
    """A pack with only lip-sync mouths still opens its mouth when no shapes are known."""
    p = persona(base="b.png", mouths={"closed": "m.png", "a": "a.png", "i": "i.png"})
    layers = p.avatar.layers
    assert layers is not None
    assert layers.mouth(0.05) == "m.png"
    assert layers.mouth(0.3) == "i.png"
    assert layers.mouth(0.9) == "a.png"
    assert layers.mouth(0.9, Viseme.O) == "a.png"  # no "o": the nearest open shape


def test_a_grid_of_too_many_cells_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("m.png: 64x5 is 320 cells; the limit is 256")):
        persona(base="b.png", sheets={"m": {"file": "m.png", "columns": 64, "rows": 5}})
    with pytest.raises(SheetError, match=re.escape("the limit is 256")):
        regrid({}, {}, "m.png", 17, 16)
