"""The desktop pet's right-click menu: the persona, mute, click-through, the full window,
quit. Mute and Quit are the full window's own actions, so the two views can never
disagree about them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu

if TYPE_CHECKING:
    from app.ui.pet_mode import PetMode


class PetMenu(QMenu):
    def __init__(self, mode: PetMode) -> None:
        super().__init__()
        self.setObjectName("petMenu")
        self._mode = mode
        window = mode.window
        self.personas = self.addMenu("&Persona")
        self._group = QActionGroup(self)
        self.personas.aboutToShow.connect(self.refresh_personas)
        self.addAction(window.mute_action)
        self.addAction(mode.click_through_action)
        self.addSeparator()
        self.full_window_action = self.addAction("&Open the full window")
        self.full_window_action.triggered.connect(mode.leave)
        self.addSeparator()
        self.addAction(window.quit_action)
        self.refresh_personas()

    def refresh_personas(self) -> None:
        """One checkable entry per persona, the current one checked (the list changes
        when personas are made, imported or deleted in the full window)."""
        window = self._mode.window
        for action in self._group.actions():
            self._group.removeAction(action)
            self.personas.removeAction(action)
            action.deleteLater()
        for persona in window.library.personas:
            action = QAction(persona.name, self.personas)
            action.setCheckable(True)
            action.setChecked(persona.id == window.persona.id)
            action.setData(persona.id)
            action.triggered.connect(
                lambda _checked=False, pid=persona.id: window.sidebar.select(pid))
            self._group.addAction(action)
            self.personas.addAction(action)

    def persona_actions(self) -> list[QAction]:
        return self._group.actions()
