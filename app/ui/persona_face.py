"""The persona editor's face rows: four colour buttons with a live thumbnail, an
optional picture that replaces the drawn face, the resting expression and whether the
face follows the reply's feelings."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.emotion import Emotion
from app.personas.avatar_layers import AvatarFileError, AvatarLayers
from app.personas.expression import ExpressionSettings
from app.personas.live2d_import import holds_live2d
from app.personas.loader import IMAGE_SUFFIXES
from app.personas.model import AvatarStyle, Persona
from app.ui import theme
from app.ui.avatar_import_dialog import AvatarImportDialog, StagedAvatar
from app.ui.live2d_row import Live2DRow
from app.ui.sidebar import persona_thumbnail

COLOUR_PARTS = (("background", "Background"), ("skin", "Skin"), ("hair", "Hair"),
                ("accent", "Accent"))
THUMB = 72
EMOTION_NAMES = {Emotion.SMUG: "teasing"}


class ColourButton(QPushButton):
    """Shows a colour as its own background; a click opens the colour picker."""

    def __init__(self, colour: str) -> None:
        super().__init__()
        self.setMinimumWidth(96)
        self.clicked.connect(self._pick)
        self.set_colour(colour)

    def set_colour(self, colour: str) -> None:
        self.colour = colour
        self.setText(colour)
        ink = "#000000" if QColor(colour).lightness() > 140 else "#ffffff"
        self.setStyleSheet(f"background: {colour}; color: {ink}; border: 1px solid "
                           f"{theme.BORDER}; border-radius: 6px; padding: 6px 10px;")

    def _pick(self) -> None:
        chosen = QColorDialog.getColor(QColor(self.colour), self, "Choose a colour")
        if chosen.isValid():
            self.set_colour(chosen.name())


class FaceRows:
    """Adds the "Colours" and "Picture" rows to ``form`` (owned by ``dialog``) and keeps
    the chosen colours and picture."""

    def __init__(self, dialog: QWidget, form: QFormLayout, style: AvatarStyle,
                 image: Path | None, expression: ExpressionSettings | None = None) -> None:
        self._dialog = dialog
        self.image: Path | None = image
        self.face = QLabel()
        self.face.setFixedSize(THUMB, THUMB)
        self.colours: dict[str, ColourButton] = {}
        grid = QHBoxLayout()
        grid.setSpacing(6)
        for key, label in COLOUR_PARTS:
            column = QVBoxLayout()
            column.setSpacing(2)
            caption = QLabel(label)
            caption.setObjectName("subtitle")
            button = ColourButton(getattr(style, key))
            button.setToolTip(f"{label} colour")
            button.clicked.connect(self.refresh)
            self.colours[key] = button
            column.addWidget(caption)
            column.addWidget(button)
            grid.addLayout(column)
        row = QHBoxLayout()
        row.addWidget(self.face)
        row.addLayout(grid, 1)
        form.addRow("Colours", row)
        self.image_name = QLineEdit()
        self.image_name.setReadOnly(True)
        self.image_name.setPlaceholderText("None: the face is drawn in these colours")
        choose = QPushButton("Picture…")
        choose.clicked.connect(self._choose_image)
        clear = QPushButton("Remove")
        clear.clicked.connect(lambda: self.set_image(None))
        picture = QHBoxLayout()
        picture.addWidget(self.image_name, 1)
        picture.addWidget(choose)
        picture.addWidget(clear)
        form.addRow("Picture", picture)
        expression = expression or ExpressionSettings()
        self.resting = QComboBox()
        for emotion in Emotion:
            self.resting.addItem(EMOTION_NAMES.get(emotion, emotion.value), emotion)
        self.resting.setCurrentIndex(list(Emotion).index(expression.resting))
        self.resting.setToolTip("The face between sentences and while idle")
        form.addRow("Resting face", self.resting)
        self.feelings = QCheckBox("Show the feeling of each sentence")
        self.feelings.setChecked(expression.tags)
        self.feelings.setToolTip("The reply marks each sentence with a feeling the face "
                                 "shows (never spoken)")
        form.addRow("", self.feelings)
        self.layers = style.layers
        self.mouth_at = style.mouth_at
        self.staged: StagedAvatar | None = None
        self.layers_name = QLineEdit()
        self.layers_name.setReadOnly(True)
        self.layers_name.setPlaceholderText("None: the picture or the drawn face")
        importer = QPushButton("Import avatar…")
        menu = QMenu(importer)
        menu.addAction("From a folder…", self._import_folder)
        menu.addAction("From a .zip…", self._import_zip)
        importer.setMenu(menu)
        drop = QPushButton("Remove")
        drop.clicked.connect(self.remove_layers)
        layered = QHBoxLayout()
        layered.addWidget(self.layers_name, 1)
        layered.addWidget(importer)
        layered.addWidget(drop)
        form.addRow("Layered avatar", layered)
        self.avatar_error = QLabel()
        self.avatar_error.setStyleSheet(f"color: {theme.DANGER};")
        self.avatar_error.setWordWrap(True)
        self.avatar_error.hide()
        form.addRow("", self.avatar_error)
        self.live2d = Live2DRow(form, style.live2d)
        self._show_layers()
        self.set_image(image)

    # ---- layered avatar ----------------------------------------------------------

    def _show_layers(self) -> None:
        if self.staged is not None:
            text = f"{len(self.staged.roles)} pictures imported (saved with the persona)"
        elif self.layers is not None:
            text = f"{len(self.layers.files())} pictures, base {Path(self.layers.base).name}"
        else:
            text = ""
        self.layers_name.setText(text)

    def remove_layers(self) -> None:
        self.layers, self.staged = None, None
        self._show_layers()

    def _import_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self._dialog, "Avatar folder",
                                                  str(Path.home()))
        if chosen:
            self.import_avatar(Path(chosen))

    def _import_zip(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self._dialog, "Avatar archive",
                                                str(Path.home()), "Zip archives (*.zip)")
        if chosen:
            self.import_avatar(Path(chosen))

    def import_avatar(self, source: Path, confirm: bool = True) -> AvatarImportDialog | None:
        """Gather ``source``'s pictures and ask which is which (``confirm`` off: take the
        guess, tests), or take the Live2D model it holds whole; a refused file is one
        line under the row."""
        try:
            if holds_live2d(source):
                self.live2d.stage(source)
                self.avatar_error.hide()
                return None
            staged = StagedAvatar(source)
        except AvatarFileError as exc:
            self.avatar_error.setText(f"Not imported: {exc}")
            self.avatar_error.show()
            return None
        self.avatar_error.hide()
        dialog = AvatarImportDialog(staged, self._dialog)
        if confirm and dialog.exec() != AvatarImportDialog.DialogCode.Accepted:
            return dialog
        self.staged = staged
        self._show_layers()
        return dialog

    def layers_for(self, persona_id: str) -> AvatarLayers | None:
        """The layers the persona file will name (an import goes under avatar/<id>/)."""
        if self.staged is None:
            return self.layers
        return self.staged.describe(persona_id)

    def install(self, folder: Path, persona_id: str) -> None:
        """Copy an imported avatar's pictures (or Live2D model) into the persona's folder
        (on Save)."""
        if self.staged is not None:
            self.layers = self.staged.install(folder, persona_id)
            self.staged = None
        self.live2d.install(folder, persona_id)

    def set_image(self, path: Path | None) -> None:
        self.image = path
        self.image_name.setText(path.name if path is not None else "")
        self.refresh()

    def _choose_image(self) -> None:
        patterns = " ".join(f"*{suffix}" for suffix in IMAGE_SUFFIXES)
        chosen, _ = QFileDialog.getOpenFileName(self._dialog, "Choose a picture",
                                                str(Path.home()), f"Pictures ({patterns})")
        if chosen:
            self.set_image(Path(chosen))

    def expression(self) -> ExpressionSettings:
        return ExpressionSettings(resting=self.resting.currentData(),
                                  tags=self.feelings.isChecked())

    def avatar_style(self) -> AvatarStyle:
        values = {key: button.colour for key, button in self.colours.items()}
        return AvatarStyle.model_validate({**values, "mouth_at": self.mouth_at})

    def refresh(self) -> None:
        """Redraw the thumbnail in the chosen colours (or picture)."""
        try:
            style = self.avatar_style()
        except ValidationError:
            return
        probe = Persona(id="preview", name="Preview", system_prompt="-", avatar=style)
        self.face.setPixmap(persona_thumbnail(probe, self.image, THUMB,
                                              self._dialog.devicePixelRatioF()))
