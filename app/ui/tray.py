"""The system tray icon: show/hide the window, mute, timers and reminders, the desktop pet
and its click-through (the one place left to turn that off), quit (only where a tray
exists)."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from app.ui.window import MainWindow


def create_tray(window: MainWindow) -> QSystemTrayIcon | None:
    """None when the platform has no tray (offscreen, some Linux desktops)."""
    if not QSystemTrayIcon.isSystemTrayAvailable():
        return None
    tray = QSystemTrayIcon(window.windowIcon(), window)
    tray.setToolTip("Hanasu")
    menu = QMenu(window)
    toggle = QAction("Hide window", menu)

    def show_or_hide() -> None:
        if window.isVisible():
            window.hide()
        else:
            window.showNormal()
            window.raise_()
            window.activateWindow()

    def relabel() -> None:
        toggle.setText("Hide window" if window.isVisible() else "Show window")

    toggle.triggered.connect(show_or_hide)
    menu.aboutToShow.connect(relabel)
    menu.addAction(toggle)
    menu.addActions([window.mute_action, window.timers.action])
    menu.addActions([window.pet.action, window.pet.click_through_action])
    menu.addSeparator()
    menu.addAction(window.quit_action)
    tray.setContextMenu(menu)
    tray.activated.connect(
        lambda reason: show_or_hide() if reason == QSystemTrayIcon.ActivationReason.Trigger
        else None
    )
    tray.show()
    window.closing.attach_tray(tray)
    window.pet.attach_tray(tray)
    return tray
