"""A layered-PNG avatar speaks, blinks and shows feelings; a card picture breathes and gets
a mouth; the editor imports a folder or zip into a persona file that loads again.
``HANASU_SCREENS=docs/screens`` also writes the README's screenshots."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from app.core.emotion import Emotion
from app.core.events import AssistantState
from app.personas.avatar_layers import AvatarFileError, AvatarLayers
from app.personas.loader import load_persona_file
from app.personas.model import AvatarStyle
from app.ui.avatar import AvatarWidget
from app.ui.face_pose import FacePose
from app.ui.layered_avatar import load_layers
from app.ui.persona_editor import EditorContext, PersonaEditor
from app.ui.sidebar import load_picture
from tests.ui import avatar_art

SHOTS = Path(__file__).parent / "screenshots"
LAYERS = AvatarLayers(base="idle.png", mouth_closed="mouth_closed.png",
                      mouth_half="mouth_half.png", mouth_open="talk.png",
                      eyes_closed="blink.png", expressions={"happy": "happy.png"})


def _save(image: QImage, name: str) -> None:
    folders = [SHOTS] + ([Path(os.environ["HANASU_SCREENS"])]
                         if os.environ.get("HANASU_SCREENS") else [])
    for folder in folders:
        folder.mkdir(exist_ok=True)
        assert image.save(str(folder / name))


def _avatar(qtbot: QtBot, style: AvatarStyle | None = None) -> AvatarWidget:
    avatar = AvatarWidget(style, seed=3)
    qtbot.addWidget(avatar)
    avatar.resize(260, 260)
    avatar.show()
    qtbot.waitExposed(avatar)
    avatar.freeze(10.0)
    return avatar


def _differing(a: QImage, b: QImage, box: tuple[int, int, int, int] | None = None) -> int:
    left, top, right, bottom = box or (0, 0, a.width(), a.height())
    return sum(a.pixel(x, y) != b.pixel(x, y)
               for x in range(left, right, 2) for y in range(top, bottom, 2))


def test_layers_draw_mouth_blink_and_feeling(qtbot: QtBot, tmp_path: Path) -> None:
    avatar = _avatar(qtbot)
    avatar.set_layers(load_layers(avatar_art.write_pack(tmp_path), LAYERS))
    painter = avatar.layered
    assert painter is not None
    quiet = FacePose(AssistantState.SPEAKING, mouth=0.0)
    assert painter.names(quiet, None) == ["idle.png", "mouth_closed.png"]
    assert painter.names(FacePose(AssistantState.SPEAKING, mouth=0.3), None)[-1] \
        == "mouth_half.png"
    assert painter.names(FacePose(AssistantState.SPEAKING, mouth=0.9), None)[-1] == "talk.png"
    assert painter.names(FacePose(blink=1.0), None)[-1] == "blink.png"
    assert painter.names(quiet, Emotion.HAPPY)[0] == "happy.png"
    assert painter.names(quiet, Emotion.SAD)[0] == "idle.png"  # no variant: the base

    rest = avatar.grab().toImage()
    avatar.set_state(AssistantState.SPEAKING)
    avatar.set_level(0.2)
    for step in range(8):  # the smoothed mouth opens
        avatar.advance(10.0 + step * 0.03)
    assert avatar.mouth > 0.45
    talking = avatar.grab().toImage()
    assert _differing(rest, talking) > 20
    avatar.cue(Emotion.HAPPY)  # an ExpressionCue's emotion
    assert avatar.feeling is Emotion.HAPPY
    happy = avatar.grab().toImage()
    assert _differing(talking, happy) > 20
    _save(happy, "avatar-layered-speaking.png")
    avatar.freeze(10.0, blink=1.0, mouth=0.0)
    assert _differing(happy, avatar.grab().toImage()) > 20
    assert painter.scalings == 1  # scaled once for this size, not per frame


def test_the_desktop_pet_mirrors_the_layers(qtbot: QtBot, tmp_path: Path) -> None:
    source = _avatar(qtbot)
    source.set_layers(load_layers(avatar_art.write_pack(tmp_path), LAYERS))
    pet = AvatarWidget(bare=True)
    qtbot.addWidget(pet)
    pet.mirror(source)
    assert pet.layers is source.layers
    source.set_layers(None)
    pet.mirror(source)
    assert pet.layers is None


@pytest.mark.parametrize(("make", "words"), [
    (lambda: QImage(4100, 8, QImage.Format.Format_ARGB32), "4100x8 pixels; the limit is 4096"),
    (b"\x89PNG\r\n\x1a\nthis is no picture", "is not a picture that can be shown"),
    (b"<svg>not a png</svg>", "is not a PNG, JPEG or WebP"),
])
def test_oversized_or_fake_pictures_are_refused(tmp_path: Path, make: object,
                                               words: str) -> None:
    path = tmp_path / "idle.png"
    if isinstance(make, bytes):
        path.write_bytes(make)  # type: ignore[arg-type]
    else:
        image = make()  # type: ignore[operator]
        image.fill(0)
        assert image.save(str(path))
    with pytest.raises(AvatarFileError, match=words):
        load_layers(tmp_path, AvatarLayers(base="idle.png"))


def test_a_card_picture_breathes_and_gets_a_mouth(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "card.png"
    assert avatar_art.card_picture().save(str(path))
    avatar = _avatar(qtbot, AvatarStyle(image="card.png"))
    avatar.set_picture(load_picture(path, 512))
    avatar.set_state(AssistantState.SPEAKING)
    avatar.freeze(10.0, mouth=0.0)
    closed = avatar.grab().toImage()
    avatar.freeze(10.0, mouth=1.0)
    open_ = avatar.grab().toImage()
    assert _differing(closed, open_, (105, 150, 155, 195)) > 10  # a mouth at the lower middle
    assert _differing(closed, open_, (70, 70, 190, 145)) == 0  # and nothing else on the face
    _save(open_, "avatar-card-speaking.png")
    avatar.freeze(11.0, mouth=0.0)  # a breath later
    assert _differing(closed, avatar.grab().toImage()) > 0


def _editor(qtbot: QtBot, folder: Path) -> PersonaEditor:
    editor = PersonaEditor(None, EditorContext(folder=folder, taken_ids=frozenset()))
    qtbot.addWidget(editor)
    editor.name.setText("Pix")
    return editor


def _saved_layers(editor: PersonaEditor, folder: Path) -> AvatarLayers:
    editor.save()
    assert editor.saved_path is not None, editor.error.text()
    persona = load_persona_file(editor.saved_path)
    assert persona.avatar.layers is not None
    load_layers(folder, persona.avatar.layers)  # every picture is there and decodes
    return persona.avatar.layers


def test_import_a_folder_into_a_persona(qtbot: QtBot, tmp_path: Path) -> None:
    folder = tmp_path / "personas"
    editor = _editor(qtbot, folder)
    dialog = editor.face_rows.import_avatar(avatar_art.write_pack(tmp_path / "pack"),
                                            confirm=False)
    assert dialog is not None and dialog.preview.layers is not None  # the live preview
    dialog.boxes["mouth_half"].setCurrentText("(none)")  # the user corrects the guess
    layers = _saved_layers(editor, folder)
    assert layers.base == "avatar/pix/idle.png"
    assert layers.mouth_open == "avatar/pix/talk.png"
    assert layers.mouth_half is None
    assert layers.expressions == {"happy": "avatar/pix/happy.png"}


def test_import_a_zip_and_refuse_a_hostile_one(qtbot: QtBot, tmp_path: Path) -> None:
    pack = avatar_art.write_pack(tmp_path / "pack")
    good, bad = tmp_path / "good.zip", tmp_path / "bad.zip"
    with zipfile.ZipFile(good, "w") as archive:
        for path in pack.iterdir():
            archive.write(path, f"model/{path.name}")
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("../../escape.png", (pack / "idle.png").read_bytes())
    folder = tmp_path / "personas"
    editor = _editor(qtbot, folder)
    assert editor.face_rows.import_avatar(bad, confirm=False) is None
    assert "points outside the archive" in editor.face_rows.avatar_error.text()
    assert editor.face_rows.import_avatar(good, confirm=False) is not None
    assert _saved_layers(editor, folder).eyes_closed == "avatar/pix/blink.png"
