"""The "Import avatar…" step of the persona editor: the pictures of a folder or .zip are
gathered into a temporary folder (``app.personas.avatar_import``, capped), their roles
guessed from the file names, and this dialog lets the user correct the guess while a live
avatar shows the result (talking when "Talk" is ticked)."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from app.core.emotion import Emotion
from app.core.events import AssistantState
from app.personas.avatar_import import ROLE_NAMES, ROLES, gather, guess_roles
from app.personas.avatar_layers import AvatarFileError, AvatarLayers
from app.ui import theme
from app.ui.avatar import AvatarWidget
from app.ui.layered_avatar import load_layers

NONE = "(none)"


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
        self.roles = guess_roles(self.names)

    def layers(self, roles: dict[str, str] | None = None) -> AvatarLayers:
        """The layers ``roles`` describe, relative to the temporary folder."""
        roles = self.roles if roles is None else roles
        plain = {r: n for r, n in roles.items() if r in ROLES}
        return AvatarLayers.model_validate(
            {**plain, "expressions": {r: n for r, n in roles.items() if r not in ROLES}})


class AvatarImportDialog(QDialog):
    """Which picture is which, with a live preview; ``staged.roles`` holds the answer."""

    def __init__(self, staged: StagedAvatar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("avatarImport")
        self.setWindowTitle("Import avatar")
        self.staged = staged
        self.boxes: dict[str, QComboBox] = {}
        form = QFormLayout()
        for role in (*ROLES, *(e.value for e in Emotion)):
            box = QComboBox()
            box.addItem(NONE)
            box.addItems(staged.names)
            box.setCurrentText(staged.roles.get(role, NONE))
            box.currentTextChanged.connect(self._changed)
            self.boxes[role] = box
            form.addRow(ROLE_NAMES.get(role, role.capitalize()), box)
        self.preview = AvatarWidget()
        self.preview.setMinimumSize(220, 220)
        self.talk = QCheckBox("Talk")
        self.talk.toggled.connect(self._talk)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {theme.DANGER};")
        right = QVBoxLayout()
        right.addWidget(self.preview, 1)
        right.addWidget(self.talk)
        row = QHBoxLayout()
        row.addLayout(form)
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
        return {role: box.currentText() for role, box in self.boxes.items()
                if box.currentText() != NONE}

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

    def _talk(self, on: bool) -> None:
        self.preview.set_state(AssistantState.SPEAKING if on else AssistantState.IDLE)
        self._wave.start() if on else self._wave.stop()

    def _speak(self) -> None:
        t = self._wave.remainingTime() + self.preview.frames
        self.preview.set_level(0.08 * (1 + math.sin(t * 0.7)))
