"""The persona list: a face thumbnail, the name and a one-line description per persona."""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.personas.model import Persona
from app.ui import theme
from app.ui.avatar import render_thumbnail

THUMB = 44


class _PersonaRow(QWidget):
    def __init__(self, persona: Persona, ratio: float) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(12)
        face = QLabel()
        face.setPixmap(render_thumbnail(persona.avatar, THUMB, ratio))
        face.setFixedSize(THUMB, THUMB)
        layout.addWidget(face)
        text = QVBoxLayout()
        text.setSpacing(2)
        name = QLabel(f"<b>{html.escape(persona.name)}</b>")
        name.setStyleSheet("font-size: 14px; background: transparent;")
        description = QLabel(persona.description)
        description.setStyleSheet(f"color: {theme.MUTED_TEXT}; font-size: 12px;"
                                  " background: transparent;")
        description.setWordWrap(True)
        description.setMinimumHeight(description.fontMetrics().lineSpacing() * 2 + 2)
        text.addWidget(name)
        text.addWidget(description)
        layout.addLayout(text, 1)
        self.setToolTip(persona.description)


class PersonaSidebar(QListWidget):
    """Emits ``persona_selected`` with the Persona when the user picks another one."""

    persona_selected = Signal(object)

    def __init__(self, personas: list[Persona], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("personaList")
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.personas = list(personas)
        ratio = self.devicePixelRatioF()
        for persona in self.personas:
            item = QListWidgetItem()
            row = _PersonaRow(persona, ratio)
            item.setSizeHint(QSize(200, max(76, row.sizeHint().height())))
            item.setData(Qt.ItemDataRole.UserRole, persona.id)
            self.addItem(item)
            self.setItemWidget(item, row)
        self.currentRowChanged.connect(self._changed)

    def select(self, persona_id: str) -> None:
        for i, persona in enumerate(self.personas):
            if persona.id == persona_id:
                self.setCurrentRow(i)
                return

    def _changed(self, row: int) -> None:
        if 0 <= row < len(self.personas):
            self.persona_selected.emit(self.personas[row])
