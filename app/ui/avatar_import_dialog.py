"""The "Import avatar…" step of the persona editor: the pictures of a folder or .zip are
gathered into a temporary folder (``app.personas.avatar_import``, capped), their roles
guessed from the file names, and this dialog lets the user correct the guess while a live
avatar shows the result (talking when "Talk" is ticked). A sprite sheet's grid is set in
the "Sprite sheet" row; each of its cells is then a choice of its own for any role, and the
picture last chosen is shown beside the preview."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImage, QPainter, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.core.emotion import Emotion
from app.core.events import AssistantState
from app.personas.avatar_import import (
    LIP_ROLES,
    ROLE_NAMES,
    ROLES,
    build_layers,
    describe,
    gather,
    guess_roles,
    guess_sheets,
    install,
    regrid,
)
from app.personas.avatar_layers import AvatarFileError, AvatarLayers
from app.personas.avatar_sheets import SheetError, cell_reference
from app.ui import theme
from app.ui.avatar import AvatarWidget
from app.ui.avatar_sheet_row import SheetRow
from app.ui.layered_avatar import LayerImages, load_layers

NONE = "(none)"
PICKED = 120
"""The side of the picture last chosen, shown under the preview."""


def picked_thumbnail(layers: LayerImages, value: str | None) -> QPixmap:
    """The picture or cell ``value`` (a mouth or eyes drawn over the base, where it
    goes), PICKED pixels high; empty for None."""
    shown = None if value is None else layers.images.get(value)
    if shown is None:
        return QPixmap()
    base = layers.images[layers.layers.base]
    image = QImage(base.size(), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    if value not in layers.layers.expressions.values() and shown is not base:
        painter.setOpacity(0.35)  # the base faint, the chosen picture over it
        painter.drawImage(image.rect(), base)
        painter.setOpacity(1.0)
    painter.drawImage(image.rect(), shown)
    painter.end()
    return QPixmap.fromImage(image.scaled(PICKED, PICKED, Qt.AspectRatioMode.KeepAspectRatio,
                                          Qt.TransformationMode.SmoothTransformation))


class StagedAvatar:
    """Pictures gathered from a folder or zip into a temporary folder (removed with it)."""

    def __init__(self, source: Path) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="hanasu-avatar-")
        self.folder = Path(self._dir.name)
        try:
            self.names = gather(source, self.folder)
        except (AvatarFileError, OSError) as exc:
            self._dir.cleanup()
            raise AvatarFileError(str(exc)) from exc
        self.sheets = guess_sheets(self.folder, self.names)
        self.roles = guess_roles(self.names, self.sheets)

    def layers(self, roles: dict[str, str] | None = None) -> AvatarLayers:
        """The layers ``roles`` describe, relative to the temporary folder."""
        return build_layers(self.roles if roles is None else roles, self.sheets)

    def choices(self) -> list[tuple[str, str]]:
        """(label, value) for every picture a role may take: a file, or each cell of a
        sheet."""
        by_file = {sheet.file: (name, sheet) for name, sheet in self.sheets.items()}
        out: list[tuple[str, str]] = []
        for file in self.names:
            if file not in by_file:
                out.append((file, file))
                continue
            name, sheet = by_file[file]
            out += [(f"{file} [cell {i}]", cell_reference(name, i)) for i in range(sheet.cells)]
        return out

    def regrid(self, file: str, columns: int, rows: int) -> None:
        self.roles, self.sheets = regrid(self.roles, self.sheets, file, columns, rows)

    def describe(self, persona_id: str) -> AvatarLayers:
        """The layers the persona file will name once installed for ``persona_id``."""
        return describe(self.roles, persona_id, self.sheets)

    def install(self, folder: Path, persona_id: str) -> AvatarLayers:
        """Copy what the roles use into ``folder/avatar/<id>/`` (on Save)."""
        return install(self.folder, self.roles, folder, persona_id, self.sheets)


class AvatarImportDialog(QDialog):
    """Which picture is which, with a live preview; ``staged.roles`` holds the answer."""

    def __init__(self, staged: StagedAvatar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("avatarImport")
        self.setWindowTitle("Import avatar")
        self.staged = staged
        self.boxes: dict[str, QComboBox] = {}
        self._last: str | None = None
        form = QFormLayout()
        self.sheet_row = SheetRow(staged.folder, staged.names)
        self.sheet_row.set_sheets(staged.sheets)
        self.sheet_row.regridded.connect(self._regrid)
        form.addRow("Sprite sheet", self.sheet_row)
        for role in (*ROLES, *LIP_ROLES, *(e.value for e in Emotion)):
            box = QComboBox()
            box.currentIndexChanged.connect(lambda _=0, r=role: self._picked(r))
            self.boxes[role] = box
            form.addRow(ROLE_NAMES.get(role, role.capitalize()), box)
        self._fill()
        fields = QWidget()
        fields.setLayout(form)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(fields)
        scroll.setMinimumWidth(fields.sizeHint().width() + 24)
        self.preview = AvatarWidget()
        self.preview.setMinimumSize(220, 220)
        self.picked = QLabel()
        self.picked.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picked.setToolTip("The picture last chosen for a role")
        self.talk = QCheckBox("Talk")
        self.talk.toggled.connect(self._talk)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {theme.DANGER};")
        right = QVBoxLayout()
        right.addWidget(self.preview, 1)
        right.addWidget(self.picked)
        right.addWidget(self.talk)
        row = QHBoxLayout()
        row.addWidget(scroll)
        row.addLayout(right, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        outer = QVBoxLayout(self)
        outer.addLayout(row, 1)
        outer.addWidget(self.error)
        outer.addWidget(buttons)
        self._wave = QTimer(self)
        self._wave.setInterval(60)
        self._wave.timeout.connect(self._speak)
        self._changed()

    def roles(self) -> dict[str, str]:
        return {role: str(box.currentData()) for role, box in self.boxes.items()
                if box.currentData()}

    def choose(self, role: str, value: str | None) -> None:
        """Give ``role`` the picture or cell ``value`` (None: no picture), as the user
        would."""
        self.boxes[role].setCurrentIndex(max(0, self.boxes[role].findData(value or "")))

    def _fill(self) -> None:
        """Every box lists the pictures and cells there are now, set to the staged roles."""
        choices = self.staged.choices()
        for role, box in self.boxes.items():
            box.blockSignals(True)
            box.clear()
            box.addItem(NONE, "")
            for label, value in choices:
                box.addItem(label, value)
            box.setCurrentIndex(max(0, box.findData(self.staged.roles.get(role, ""))))
            box.blockSignals(False)

    def _regrid(self, file: str, columns: int, rows: int) -> None:
        try:
            self.staged.regrid(file, columns, rows)
        except SheetError as exc:  # too many cells: the mapping stays as it was
            self.error.setText(str(exc))
            self.ok.setEnabled(False)
            return
        self._fill()
        self._changed()

    def _picked(self, role: str) -> None:
        self._last = role
        self._changed()

    def _changed(self) -> None:
        """Show the mapping now; one that cannot be shown cannot be accepted."""
        roles = self.roles()
        try:
            if "base" not in roles:
                raise AvatarFileError("pick a base picture")
            layers = load_layers(self.staged.folder, self.staged.layers(roles))
        except (AvatarFileError, ValueError) as exc:
            self.error.setText(str(exc))
            self.ok.setEnabled(False)
            self.preview.set_layers(None)
            return
        self.staged.roles = roles
        self.error.setText("")
        self.ok.setEnabled(True)
        self.preview.set_layers(layers)
        self.picked.setPixmap(picked_thumbnail(layers, roles.get(self._last or "base")))

    def _talk(self, on: bool) -> None:
        self.preview.set_state(AssistantState.SPEAKING if on else AssistantState.IDLE)
        self._wave.start() if on else self._wave.stop()

    def _speak(self) -> None:
        t = self._wave.remainingTime() + self.preview.frames
        self.preview.set_level(0.08 * (1 + math.sin(t * 0.7)))
