"""What closing the main window does: quit, or (while a tray icon is shown and the user
chose it) hide the window and keep Hanasu running in the tray.

The first close with a tray icon asks which the user wants and remembers the answer
(``Settings.close_to_tray``); the View menu's "Keep running in the tray when closed"
changes it later. Without a tray icon, closing always quits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QSystemTrayIcon, QWidget

if TYPE_CHECKING:
    from app.ui.window import MainWindow

Ask = Callable[[QWidget], bool]


def ask_keep_running(parent: QWidget) -> bool:
    """True: keep running in the tray; False (or Escape): quit."""
    box = QMessageBox(QMessageBox.Icon.Question, "Close Hanasu",
                      "Keep Hanasu running in the tray when its window is closed?\n\n"
                      "It keeps listening while the window is hidden: mute it or quit from "
                      "the tray icon's menu. You can change this under View.", parent=parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    keep = box.addButton("Keep running in the tray", QMessageBox.ButtonRole.AcceptRole)
    quit_ = box.addButton("Quit", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(keep)
    box.setEscapeButton(quit_)
    box.exec()
    return box.clickedButton() is keep


class CloseToTray:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.tray: QSystemTrayIcon | None = None
        self.ask: Ask = ask_keep_running
        """Asks on the first close with a tray icon; tests replace it."""
        self.action = QAction("&Keep running in the tray when closed", window)
        self.action.setCheckable(True)
        self.action.setVisible(False)  # only where there is a tray icon
        self.action.toggled.connect(self._chosen)

    def attach_tray(self, tray: QSystemTrayIcon) -> None:
        self.tray = tray
        self.action.blockSignals(True)
        self.action.setChecked(bool(self.window.settings.close_to_tray))
        self.action.blockSignals(False)
        self.action.setVisible(True)

    def keep_running(self) -> bool:
        """Whether this close hides the window instead of quitting (asks the first time)."""
        if self.tray is None or not self.tray.isVisible():
            return False
        choice = self.window.settings.close_to_tray
        if choice is None:
            choice = self.ask(self.window)
            self.action.setChecked(choice)  # stores it
            self._chosen(choice)
        return choice

    def _chosen(self, keep: bool) -> None:
        if self.window.settings.close_to_tray is not keep:
            self.window.store_settings(self.window.settings.replace(close_to_tray=keep))
