"""The Help menu (About with the version, shortcuts, the data folder, reporting a problem)
and what closing the window does while a tray icon is shown (issue 23, item 11)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.paths import user_data_dir, user_log_dir
from app.ui import help_menu
from app.ui.window import MainWindow


def _menu_titles(window: MainWindow) -> list[str]:
    return [action.text().replace("&", "") for action in window.menuBar().actions()]


def test_help_is_the_last_menu_with_about_shortcuts_data_folder_and_report(
        window: MainWindow) -> None:
    assert _menu_titles(window)[-1] == "Help"
    help_actions = window.menuBar().actions()[-1].menu().actions()  # type: ignore[union-attr]
    names = [a.text().replace("&", "") for a in help_actions if not a.isSeparator()]
    assert names == ["Keyboard shortcuts", "Open the data folder", "Report a problem…",
                     "About Hanasu"]


def test_about_names_the_installed_version(qtbot: QtBot, window: MainWindow) -> None:
    box = help_menu.show_about(window)
    qtbot.addWidget(box)
    assert f"Hanasu {importlib.metadata.version('hanasu')}" in box.text()
    box.close()


def test_the_shortcut_list_is_read_from_the_window_actions(qtbot: QtBot,
                                                           window: MainWindow) -> None:
    lines = help_menu.shortcut_lines(window)
    for expected in ("Ctrl+,\tSettings", "Ctrl+M\tMute microphone", "Ctrl+L\tLatency HUD",
                     "Ctrl+Q\tQuit", "F1\tKeyboard shortcuts"):
        assert expected in lines
    box = help_menu.show_shortcuts(window)
    qtbot.addWidget(box)
    assert "Ctrl+M\tMute microphone" in box.text()
    box.close()


def test_f1_opens_the_shortcut_list(qtbot: QtBot, window: MainWindow,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[QWidget] = []
    monkeypatch.setattr(help_menu, "show_shortcuts", shown.append)
    window.activateWindow()
    window.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_F1)
    assert shown == [window]


def test_open_data_folder_opens_the_data_folder(window: MainWindow,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[QUrl] = []

    def open_url(url: QUrl) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(help_menu.QDesktopServices, "openUrl", open_url)
    window.menus.data_folder_action.trigger()
    assert [Path(url.toLocalFile()) for url in opened] == [user_data_dir()]
    assert user_data_dir().is_dir()


def test_report_a_problem_names_doctor_and_the_log(qtbot: QtBot, window: MainWindow) -> None:
    box = help_menu.show_report_help(window)
    qtbot.addWidget(box)
    assert "hanasu doctor" in box.text()
    assert str(user_log_dir() / "hanasu.log") in box.text()
    box.close()


class _Tray:
    """Stands in for a shown QSystemTrayIcon (offscreen Qt has no tray)."""

    def isVisible(self) -> bool:
        return True


@pytest.fixture
def quits(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    calls: list[bool] = []
    monkeypatch.setattr("app.ui.window.QApplication.quit", lambda: calls.append(True))
    return calls


def test_without_a_tray_closing_quits_without_asking(window: MainWindow,
                                                     quits: list[bool]) -> None:
    asked: list[QWidget] = []
    window.closing.ask = lambda parent: asked.append(parent) or True
    assert not window.closing.action.isVisible()  # nothing to offer
    window.close()
    assert quits == [True] and asked == []


def test_with_a_tray_the_first_close_asks_and_remembers(
        qtbot: QtBot, window: MainWindow, quits: list[bool]) -> None:
    asked: list[QWidget] = []
    window.closing.ask = lambda parent: asked.append(parent) or True
    window.closing.attach_tray(_Tray())  # type: ignore[arg-type]
    assert window.closing.action.isVisible() and not window.closing.action.isChecked()
    window.close()
    assert asked == [window] and quits == []
    assert not window.isVisible()  # hidden to the tray, still running
    assert window.settings.close_to_tray is True and window.closing.action.isChecked()
    window.show()
    qtbot.waitExposed(window)
    window.close()
    assert len(asked) == 1 and quits == [] and not window.isVisible()  # not asked again
    window.show()
    window.closing.action.setChecked(False)  # View -> Keep running in the tray: off
    assert window.settings.close_to_tray is False
    window.close()
    assert quits == [True]


def test_answering_quit_quits_and_is_remembered(window: MainWindow, quits: list[bool]) -> None:
    window.closing.ask = lambda parent: False
    window.closing.attach_tray(_Tray())  # type: ignore[arg-type]
    window.close()
    assert quits == [True] and window.settings.close_to_tray is False
