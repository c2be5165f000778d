"""The main window's menus and shortcuts: Hanasu (Settings, Models, Tool servers, Voices,
Quit), View (Mute, Latency HUD, Timers and reminders, Desktop pet) and Help (About,
shortcuts, the data folder, reporting a problem).

The actions are also added to the window itself, so their shortcuts work while the menu
bar is hidden or another widget has focus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication

from app.ui import help_menu

if TYPE_CHECKING:
    from app.ui.window import MainWindow


class WindowMenus:
    """Builds the menus of ``window``; the window keeps the actions it reads back."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        menu = window.menuBar().addMenu("&Hanasu")
        self.settings_action = QAction("&Settings…", window)
        self.settings_action.setShortcut(QKeySequence("Ctrl+,"))  # Linux's Preferences is empty
        self.settings_action.triggered.connect(window.settings_requested.emit)
        self.models_action = QAction("&Models…", window)
        self.models_action.triggered.connect(window.models_requested.emit)
        self.tool_servers_action = QAction("&Tool servers…", window)
        """Opened by ``DialogLauncher`` (it holds the session's MCP hub)."""
        self.voices_action = QAction("&Voices…", window)
        """Enrolled voices (``DialogLauncher``: it holds the session's pipeline)."""
        self.quit_action = QAction("&Quit", window)
        self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        self.quit_action.triggered.connect(QApplication.quit)
        menu.addActions([self.settings_action, self.models_action, self.tool_servers_action,
                         self.voices_action])
        menu.addSeparator()
        menu.addAction(self.quit_action)
        view = window.menuBar().addMenu("&View")
        self.mute_action = QAction("&Mute microphone", window)
        self.mute_action.setCheckable(True)
        self.mute_action.setShortcut(QKeySequence("Ctrl+M"))
        self.mute_action.toggled.connect(window.set_muted)
        self.hud_action = QAction("&Latency HUD", window)
        self.hud_action.setCheckable(True)
        self.hud_action.setShortcut(QKeySequence("Ctrl+L"))
        self.hud_action.toggled.connect(window.set_hud_visible)
        window.hud_button.toggled.connect(self.hud_action.setChecked)
        view.addActions([self.mute_action, self.hud_action, window.timers.action])
        view.addSeparator()
        view.addActions([window.pet.action, window.pet.click_through_action])
        view.addSeparator()
        view.addAction(window.closing.action)
        window.addActions([self.settings_action, self.mute_action, self.hud_action,
                           window.timers.action, window.pet.action, self.quit_action])

    def add_help_menu(self) -> None:
        """The last menu (after the Conversation and Personas menus, built later)."""
        window = self.window
        menu = window.menuBar().addMenu("H&elp")
        self.shortcuts_action = QAction("&Keyboard shortcuts", window)
        self.shortcuts_action.setShortcut(QKeySequence("F1"))
        self.shortcuts_action.triggered.connect(lambda: help_menu.show_shortcuts(window))
        self.data_folder_action = QAction("Open the &data folder", window)
        self.data_folder_action.triggered.connect(lambda: help_menu.open_data_folder(window))
        self.report_action = QAction("&Report a problem…", window)
        self.report_action.triggered.connect(lambda: help_menu.show_report_help(window))
        self.about_action = QAction("&About Hanasu", window)
        self.about_action.triggered.connect(lambda: help_menu.show_about(window))
        menu.addActions([self.shortcuts_action, self.data_folder_action, self.report_action])
        menu.addSeparator()
        menu.addAction(self.about_action)
        window.addAction(self.shortcuts_action)
