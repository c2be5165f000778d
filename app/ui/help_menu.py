"""What the Help menu shows: About (with the version), the keyboard shortcuts (read from
the window's own actions, so the list cannot drift from them), the data folder in the
file manager, and how to report a problem.

Each dialog is opened window-modal and returned, so tests can read it and close it.
"""

from __future__ import annotations

import importlib.metadata
import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMessageBox, QWidget

from app.logging_setup import LOG_FILE
from app.paths import user_data_dir, user_log_dir


def app_version() -> str:
    try:
        return importlib.metadata.version("hanasu")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _box(parent: QWidget, title: str, text: str) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.NoIcon, title, text, QMessageBox.StandardButton.Close,
                      parent)
    box.setTextFormat(Qt.TextFormat.PlainText)  # paths and names are not markup
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()
    return box


def show_about(parent: QWidget) -> QMessageBox:
    return _box(parent, "About Hanasu", (
        f"Hanasu {app_version()}\n\n"
        "A voice companion you talk to. Listening, understanding and speaking all run on "
        "this computer: nothing you say leaves it.\n\n"
        f"Python {platform.python_version()}, Qt for Python {pyside_version}\n"
        "Licence: Apache-2.0"))


def shortcut_lines(window: QMainWindow) -> list[str]:
    """'Ctrl+M  Mute microphone' for every action of the window that has a shortcut."""
    lines = []
    for action in window.actions():
        keys = action.shortcut()
        if keys.isEmpty():
            continue
        name = action.text().replace("&", "").removesuffix("…").strip()
        lines.append(f"{keys.toString(QKeySequence.SequenceFormat.NativeText)}\t{name}")
    return lines


def show_shortcuts(window: QMainWindow) -> QMessageBox:
    text = "\n".join(shortcut_lines(window))
    return _box(window, "Keyboard shortcuts", (
        f"{text}\n\nTab moves between controls, Space or Enter presses the focused one. "
        "There is no push-to-talk key: Hanasu listens whenever it is not muted."))


def open_data_folder(parent: QWidget) -> bool:
    """Show the folder with conversations, memories and personas in the file manager."""
    folder = user_data_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
        return True
    _box(parent, "Data folder", f"Your conversations, memories and personas are in\n{folder}")
    return False


def show_report_help(parent: QWidget) -> QMessageBox:
    return _box(parent, "Report a problem", (
        "1. In a terminal, run:  hanasu doctor\n"
        "   It prints your system, audio devices and models (no conversations, no network) "
        "to paste into your report.\n"
        f"2. Attach the log: {user_log_dir() / LOG_FILE}\n"
        "   At the default level it holds no words of your conversations.\n"
        "3. Say what you did, what you expected and what happened instead, and report it "
        "where you got Hanasu from (its issue tracker).\n\n"
        f"Hanasu {app_version()}"))
