"""The desktop pet: only the character, on a frameless, translucent, always-on-top window,
with the sentence being said in a bubble above it.

It is a view, like the full window's avatar: ``PetMode`` (``pet_mode.py``) feeds it the
same state and words and owns what its gestures do. Here live the gestures themselves:
the left button drags it (the window system's own move where it offers one, which is the
only way on Wayland), the wheel resizes it around its feet, a right click asks for the
menu, a double click (or a close from the window system) asks for the full window.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QPoint, QSize, Qt, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QContextMenuEvent,
    QHelpEvent,
    QMouseEvent,
    QMoveEvent,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QToolTip, QWidget

from app.storage.settings import PET_SIZE_MAX, PET_SIZE_MIN
from app.ui.avatar import AvatarWidget
from app.ui.pet_bubble import BUBBLE_HEIGHT, PetBubble

WHEEL_STEP = 1.1
"""Each notch of the wheel makes the character this much bigger (or smaller)."""
NOTCH = 120
"""``QWheelEvent.angleDelta`` of one notch; touchpads send parts of it."""
MIN_WIDTH = 240
"""The window is at least this wide, so a small character's bubble still holds a sentence."""
FLAGS = (Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint
         | Qt.WindowType.WindowStaysOnTopHint)
"""Tool: no taskbar entry of its own (the app has its tray icon and the full window)."""


def clamp_size(size: int) -> int:
    return max(PET_SIZE_MIN, min(PET_SIZE_MAX, size))


def wheel_size(size: int, notches: int) -> int:
    """The character's size after ``notches`` wheel notches (up: bigger), within bounds."""
    return clamp_size(round(size * WHEEL_STEP ** notches))


HEADROOM = 0.1
"""The top tenth of the avatar's square is empty above the face's halo: the bubble's tail
reaches into it, close to the head."""


def bubble_overlap(size: int) -> int:
    return round(size * HEADROOM)


def pet_window_size(size: int) -> QSize:
    """The window around a character ``size`` pixels across and its bubble."""
    return QSize(max(size, MIN_WIDTH), size + BUBBLE_HEIGHT - bubble_overlap(size))


class PetWindow(QWidget):
    size_changed = Signal(int)
    """The user resized the character (the wheel); its new size in pixels."""
    moved = Signal()
    menu_requested = Signal(QPoint)
    """A right click, at this global position."""
    full_window_requested = Signal()

    def __init__(self, size: int, describe: Callable[[], str]) -> None:
        super().__init__(None, FLAGS)
        self.setObjectName("desktopPet")
        self.setWindowTitle("Hanasu")
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        self._describe = describe
        self.bubble = PetBubble(self)
        self.avatar = AvatarWidget(parent=self, bare=True)
        self.avatar.setMinimumSize(PET_SIZE_MIN, PET_SIZE_MIN)
        self.bubble.raise_()  # above the halo where the two meet
        self._size = 0
        self._wheel = 0.0
        self._drag_from: QPoint | None = None
        self.set_character_size(size)

    # ---- size and input ----------------------------------------------------------------

    @property
    def character_size(self) -> int:
        return self._size

    def set_character_size(self, size: int) -> None:
        self._size = clamp_size(size)
        self.setFixedSize(pet_window_size(self._size))
        self._place_children()

    def resize_character(self, size: int) -> None:
        """A new size, the character's feet staying where they stand."""
        size = clamp_size(size)
        if size == self._size:
            return
        old = self.geometry()
        self.set_character_size(size)
        self.move(old.x() + (old.width() - self.width()) // 2,
                  old.y() + old.height() - self.height())
        self.size_changed.emit(size)

    @property
    def click_through(self) -> bool:
        return bool(self.windowFlags() & Qt.WindowType.WindowTransparentForInput)

    def set_click_through(self, on: bool) -> None:
        """Clicks and the wheel go to the windows beneath (the menu then cannot open:
        the tray's and the full window's menus turn it off)."""
        if on == self.click_through:
            return
        shown, where = self.isVisible(), self.pos()
        self.setWindowFlag(Qt.WindowType.WindowTransparentForInput, on)  # hides the window
        if shown:
            self.move(where)
            self.show()

    def _place_children(self) -> None:
        self.bubble.setGeometry(0, 0, self.width(), BUBBLE_HEIGHT)
        self.avatar.setGeometry((self.width() - self._size) // 2,
                                BUBBLE_HEIGHT - bubble_overlap(self._size), self._size,
                                self._size)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_children()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() is not Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        event.accept()
        handle = self.windowHandle()
        if handle is not None and handle.startSystemMove():
            return  # the window system moves it (X11 window managers, Wayland)
        self._drag_from = event.globalPosition().toPoint() - self.pos()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._drag_from is not None and event.buttons() & Qt.MouseButton.LeftButton:
            self.move(event.globalPosition().toPoint() - self._drag_from)
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._drag_from = None
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() is Qt.MouseButton.LeftButton:
            self.full_window_requested.emit()

    def wheelEvent(self, event: QWheelEvent) -> None:
        self._wheel += event.angleDelta().y() / NOTCH
        notches = int(self._wheel)  # whole notches; a touchpad's parts add up
        if notches:
            self._wheel -= notches
            self.resize_character(wheel_size(self._size, notches))
        event.accept()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        self.menu_requested.emit(event.globalPos())
        event.accept()

    def moveEvent(self, event: QMoveEvent) -> None:
        super().moveEvent(event)
        self.moved.emit()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closed by the window system (Alt+F4): back to the full window, not quit. Any
        other close is accepted: Qt 6's ``quit()`` asks every window first, and a refusal
        here would keep the app running (Quit, Ctrl+Q, SIGTERM)."""
        if event.spontaneous():
            event.ignore()
            self.full_window_requested.emit()
            return
        super().closeEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            QToolTip.showText(event.globalPos(), self._describe(), self)
            return True
        return super().event(event)
