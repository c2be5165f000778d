"""The persona editor's "Live2D model" row: which model the persona names, one imported
through "Import avatar…" (a folder or zip holding a ``.model3.json``, staged and checked
by ``app.personas.live2d_import``) until Save copies it in, and Remove."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLineEdit, QPushButton

from app.personas.live2d_import import StagedLive2D
from app.personas.live2d_model import Live2DAvatar
from app.ui.live2d_runtime import INSTALL_HINT


class Live2DRow:
    def __init__(self, form: QFormLayout, live2d: Live2DAvatar | None) -> None:
        self.live2d = live2d
        self.staged: StagedLive2D | None = None
        self.name = QLineEdit()
        self.name.setObjectName("live2dModel")
        self.name.setReadOnly(True)
        self.name.setPlaceholderText("None (import a folder or .zip holding a .model3.json)")
        self.name.setToolTip(f"Drawn when the optional live2d-py package is installed "
                             f"({INSTALL_HINT}) and its licence accepted; otherwise the "
                             f"layers, picture or drawn face are shown")
        drop = QPushButton("Remove")
        drop.clicked.connect(self.remove)
        row = QHBoxLayout()
        row.addWidget(self.name, 1)
        row.addWidget(drop)
        form.addRow("Live2D model", row)
        self._show()

    def _show(self) -> None:
        if self.staged is not None:
            info = self.staged.info
            self.name.setText(f"{info.path.name}: {len(info.expressions)} expressions, "
                              f"{info.total_bytes / 2**20:.1f} MiB (saved with the persona)")
        elif self.live2d is not None:
            self.name.setText(PurePosixPath(self.live2d.model).name)
        else:
            self.name.setText("")

    def stage(self, source: Path) -> None:
        """Take the model in ``source``; raises AvatarFileError (nothing changes then)."""
        self.staged = StagedLive2D(source)
        self._show()

    def remove(self) -> None:
        self.live2d, self.staged = None, None
        self._show()

    def live2d_for(self, persona_id: str) -> Live2DAvatar | None:
        """What the persona file will name (an import goes under avatar/<id>/live2d/)."""
        if self.staged is None:
            return self.live2d
        return Live2DAvatar(model=f"avatar/{persona_id}/live2d/{self.staged.live2d.model}")

    def install(self, folder: Path, persona_id: str) -> None:
        """Copy an imported model into the persona's folder (on Save)."""
        if self.staged is not None:
            self.live2d = self.staged.install(folder, persona_id)
            self.staged = None
