"""Desktop-pet mode: the app shrinks to its character on the desktop and back.

The pet is a second view over the same window and session, not a second pipeline: its
face follows the full window's avatar (``AvatarWidget.looks_changed``), its bubble reads
the sentence being played from the full window's transcript model (updated first by
``TranscriptFeed`` from the same bridge signals), and its menu uses the window's own Mute
and Quit actions and persona list. While the pet shows, the full window is hidden; showing
the full window in any way (the pet's menu, the tray, a second launch) ends pet mode.

Whether the pet shows, its size and its place are kept in the settings, so the app starts
as it was left. Click-through is not kept: a pet that ignores the mouse is only offered
while a tray icon can turn it off again. On Wayland the compositor places windows and
decides what stays on top; the window says so once, and positions are not stored there.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QSystemTrayIcon, QToolButton, QWidget

from app.core.telemetry import MouthCue
from app.ui import icons
from app.ui.pet_menu import PetMenu
from app.ui.pet_window import PetWindow
from app.ui.single_instance import raise_window

if TYPE_CHECKING:
    from app.ui.window import MainWindow

log = logging.getLogger(__name__)

SHORTCUT = "Ctrl+D"
SAVE_DELAY_MS = 500
"""A drag moves the window many times: its place is stored once it rests."""
LINGER_MS = 4000
"""The last sentence stays in the bubble this long after the voice stops."""
MARGIN = 24
"""The first place: the screen's bottom-right corner, this far in."""
WAYLAND_NOTICE = (
    "On Wayland the compositor decides where windows go and which stay on top: the desktop "
    "pet may open where the compositor puts it and may not stay above other windows, and "
    "its place is not remembered. Dragging it works.")
NO_TRAY_TIP = ("Needs a tray icon: a pet that lets clicks through can only be turned back "
               "from the tray icon's menu")


def on_wayland() -> bool:
    return QGuiApplication.platformName().startswith("wayland")


def pet_button() -> QToolButton:
    """The full window's button for the pet, in the avatar's corner."""
    button = QToolButton()
    button.setObjectName("petButton")
    button.setIcon(icons.pet_icon())
    button.setIconSize(QSize(18, 18))
    button.setToolTip(f"Desktop pet: only the character, above other windows ({SHORTCUT})")
    return button


class PetMode(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.pet: PetWindow | None = None
        self.menu: PetMenu | None = None
        self._active = False
        self.wayland = on_wayland()
        self._told_wayland = False
        self.action = QAction("&Desktop pet", window)
        self.action.setCheckable(True)
        self.action.setShortcut(QKeySequence(SHORTCUT))
        self.action.setToolTip(f"Show only the character, above other windows ({SHORTCUT})")
        self.action.toggled.connect(self.set_active)
        self.click_through_action = QAction("&Click-through pet", window)
        self.click_through_action.setCheckable(True)
        self.click_through_action.setEnabled(False)  # until a tray icon exists
        self.click_through_action.setToolTip(NO_TRAY_TIP)
        self.click_through_action.toggled.connect(self.set_click_through)
        window.pet_button.clicked.connect(self.enter)
        self._save = QTimer(self)
        self._save.setSingleShot(True)
        self._save.setInterval(SAVE_DELAY_MS)
        self._save.timeout.connect(self._store_geometry)
        self._linger = QTimer(self)
        self._linger.setSingleShot(True)
        self._linger.setInterval(LINGER_MS)
        self._linger.timeout.connect(self._clear_bubble)
        window.installEventFilter(self)

    @property
    def active(self) -> bool:
        """The pet shows instead of the full window."""
        return self._active

    @property
    def click_through(self) -> bool:
        return self.click_through_action.isChecked()

    def show_initial(self) -> None:
        """At launch: the pet if the app was left as one, else the full window."""
        if self.window.settings.pet_mode:
            self.enter()
        else:
            self.window.show()

    def shown_widget(self) -> QWidget:
        """The top-level window the user sees now."""
        return self.pet if self._active and self.pet is not None else self.window

    def attach_tray(self, tray: QSystemTrayIcon) -> None:
        """A tray icon exists: click-through can be offered (its menu turns it off)."""
        self.click_through_action.setEnabled(True)
        self.click_through_action.setToolTip(
            "Clicks go through the pet to the windows beneath; turn it off from the tray "
            "icon's menu")

    # ---- switching -----------------------------------------------------------------------

    def set_active(self, on: bool) -> None:
        if on:
            self.enter()
        else:
            self.leave()

    def enter(self) -> None:
        if self._active:
            return
        pet = self._build()
        self._active = True
        self._sync_action()
        pet.avatar.mirror(self.window.avatar)
        self._update_bubble()
        self._place(pet)
        pet.show()
        pet.raise_()
        self.window.hide()
        log.info("desktop pet shown (%d px, %s)", pet.character_size,
                 QGuiApplication.platformName())
        self._remember(pet_mode=True)
        if self.wayland and not self._told_wayland:
            self._told_wayland = True
            self.window.add_notice(WAYLAND_NOTICE)

    def leave(self) -> None:
        """Back to the full window."""
        if not self._active:
            return
        self._active = False
        self._sync_action()
        self._flush_geometry()
        if self.pet is not None:
            self.pet.hide()
        self._remember(pet_mode=False)
        raise_window(self.window)  # as it was: maximized stays maximized

    def set_click_through(self, on: bool) -> None:
        if self.click_through_action.isChecked() != on:
            self.click_through_action.setChecked(on)  # comes back here through toggled
            return
        if self.pet is not None:
            self.pet.set_click_through(on)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The full window shown by anyone (tray, second launch) ends pet mode."""
        if watched is self.window and event.type() == QEvent.Type.Show and self._active:
            self.leave()
        return False

    def shutdown(self) -> None:
        """At exit: store a place still waiting for its delay; the pet goes."""
        self._flush_geometry()
        if self.pet is not None:
            self.pet.hide()
            self.pet.deleteLater()
            self.pet = None

    # ---- the pet window --------------------------------------------------------------

    def _build(self) -> PetWindow:
        if self.pet is not None:
            return self.pet
        window = self.window
        pet = PetWindow(window.settings.pet_size, self.describe)
        pet.addActions([self.action, window.mute_action, window.quit_action])
        pet.moved.connect(self._moved)
        pet.size_changed.connect(lambda _size: self._save.start())
        pet.menu_requested.connect(self._show_menu)
        pet.full_window_requested.connect(self.leave)
        pet.set_click_through(self.click_through)
        self.menu = PetMenu(self)
        bridge = window.bridge  # after TranscriptFeed's connections: the model is current
        for signal in (bridge.chunk_audio, bridge.playback_started, bridge.playback_ended,
                       bridge.turn_cancelled):
            signal.connect(lambda *_args: self._update_bubble())
        bridge.playback_level.connect(self._on_level)
        bridge.mouth.connect(self._on_mouth)
        window.avatar.looks_changed.connect(self._follow_avatar)
        self.pet = pet
        window.live2d.host(pet.avatar)  # a persona's Live2D model on the pet too
        return pet

    def describe(self) -> str:
        """The pet's tooltip: who it is, what it is doing, what the mouse does."""
        lines = [f"{self.window.persona.name}: {self.window.status.text()}",
                 "Drag to move, the wheel resizes, right-click for the menu, "
                 "double-click for the full window"]
        if self.wayland:
            lines.append("Wayland: the compositor may not keep it above other windows")
        return "\n".join(lines)

    def _place(self, pet: PetWindow) -> None:
        settings = self.window.settings
        pet.set_character_size(settings.pet_size)
        if settings.pet_position is not None and not self.wayland:
            where = QPoint(*settings.pet_position)
            if QGuiApplication.screenAt(QRect(where, pet.size()).center()) is not None:
                pet.move(where)
                return
        screen = self.window.screen() or QGuiApplication.primaryScreen()
        area = screen.availableGeometry()
        pet.move(area.right() - pet.width() - MARGIN, area.bottom() - pet.height() - MARGIN)

    def _show_menu(self, at: QPoint) -> None:
        if self.menu is not None:
            self.menu.refresh_personas()
            self.menu.popup(at)

    def _follow_avatar(self) -> None:
        if self._active and self.pet is not None:
            self.pet.avatar.mirror(self.window.avatar)

    def _on_level(self, level: float, _at: float) -> None:
        if self._active and self.pet is not None:
            self.pet.avatar.set_level(level)
            self._update_bubble()

    def _on_mouth(self, cue: MouthCue) -> None:
        if self.pet is not None:  # the window's clock: set once a pipeline is attached
            self.pet.avatar.play_clock = self.window.avatar.play_clock
            self.pet.avatar.mouth_cue(cue)

    def _update_bubble(self) -> None:
        if not self._active or self.pet is None:
            return
        text = self.window.transcript.model.current_sentence()
        if text:
            self._linger.stop()
            self.pet.bubble.set_text(text)
        elif self.pet.bubble.text and not self._linger.isActive():
            self._linger.start()

    def _clear_bubble(self) -> None:
        if self.pet is not None:
            self.pet.bubble.set_text("")

    # ---- settings --------------------------------------------------------------------

    def _sync_action(self) -> None:
        self.action.blockSignals(True)
        self.action.setChecked(self._active)
        self.action.blockSignals(False)

    def _moved(self) -> None:
        if self._active and self.pet is not None and self.pet.isVisible():
            self._save.start()

    def _flush_geometry(self) -> None:
        if self._save.isActive():
            self._save.stop()
            self._store_geometry()

    def _store_geometry(self) -> None:
        if self.pet is None:
            return
        changes: dict[str, Any] = {"pet_size": self.pet.character_size}
        if not self.wayland:
            changes["pet_position"] = (self.pet.x(), self.pet.y())
        self._remember(**changes)

    def _remember(self, **changes: Any) -> None:
        settings = self.window.settings
        if any(getattr(settings, name) != value for name, value in changes.items()):
            self.window.store_settings(settings.replace(**changes))
