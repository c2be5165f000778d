"""Keyboard and accessibility: a visible focus ring, visibly disabled tool buttons, an
accessible name on every interactive widget, Ctrl+, for Settings, the wheel leaving
unfocused values alone, and Escape asking before unsaved persona edits are lost."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QScrollArea, QWidget
from pytestqt.qtbot import QtBot

from app.storage.settings import Settings
from app.ui.keyboard import interactive_widgets
from app.ui.persona_editor import PersonaEditor
from app.ui.settings_dialog import SettingsDialog
from app.ui.window import MainWindow


def _pixels(widget: QWidget) -> np.ndarray:
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    width, height = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), np.uint8, image.bytesPerLine() * height)
    rows = raw.reshape(height, image.bytesPerLine())[:, : width * 3]
    return rows.reshape(height, width, 3).copy()  # the QImage goes when we return


def _activate(qtbot: QtBot, window: QWidget) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)


def _lost_focus(widget: QWidget) -> bool:
    return not widget.hasFocus()


def _unnamed(root: QWidget) -> list[str]:
    return [f"{type(w).__name__} {w.objectName()!r}" for w in interactive_widgets(root)
            if not w.accessibleName().strip()]


def test_keyboard_focus_is_visible_on_buttons_lists_and_inputs(
        qtbot: QtBot, window: MainWindow) -> None:
    _activate(qtbot, window)
    for widget in (window.sidebar.new_button, window.sidebar.duplicate_button,
                   window.mute_button, window.sidebar):
        window.transcript.setFocus()
        qtbot.waitUntil(partial(_lost_focus, widget))
        before = _pixels(widget)
        widget.setFocus(Qt.FocusReason.TabFocusReason)
        qtbot.waitUntil(widget.hasFocus)
        after = _pixels(widget)
        changed = np.abs(after.astype(int) - before.astype(int)).max(axis=2) > 40
        assert changed.sum() > 40, f"{widget.objectName()}: focus not visible"


def test_focus_is_visible_in_the_settings_inputs(qtbot: QtBot, window: MainWindow) -> None:
    dialog = SettingsDialog(Settings(), window, load_devices=False)
    qtbot.addWidget(dialog)
    dialog.show()
    _activate(qtbot, dialog)
    combo = dialog.input_combo
    dialog.findChildren(QWidget)[0].setFocus()
    before = _pixels(combo)
    combo.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(combo.hasFocus)
    changed = np.abs(_pixels(combo).astype(int) - before.astype(int)).max(axis=2) > 40
    assert changed.sum() > 40


def test_disabled_tool_buttons_look_disabled(qtbot: QtBot, window: MainWindow) -> None:
    window.sidebar.select("hana")  # built in: Edit and Delete are disabled
    edit, duplicate = window.sidebar.edit_button, window.sidebar.duplicate_button
    assert not edit.isEnabled() and duplicate.isEnabled()

    def brightest(widget: QWidget) -> float:
        return float(_pixels(widget).astype(float).mean(axis=2).max())

    assert brightest(edit) < 0.6 * brightest(duplicate)


def test_every_interactive_widget_has_an_accessible_name(qtbot: QtBot,
                                                         window: MainWindow) -> None:
    assert len(interactive_widgets(window)) >= 8
    assert _unnamed(window) == []
    assert window.sidebar.accessibleName() == "Personas"
    settings = SettingsDialog(Settings(), window, load_devices=False)
    qtbot.addWidget(settings)
    assert _unnamed(settings) == []
    assert settings.input_combo.accessibleName() == "Microphone"
    editor = window.persona_actions.new()
    qtbot.addWidget(editor)
    assert _unnamed(editor) == []
    assert editor.name.accessibleName() == "Name"
    editor.done(0)


def test_ctrl_comma_opens_settings(qtbot: QtBot, window: MainWindow) -> None:
    _activate(qtbot, window)
    with qtbot.waitSignal(window.settings_requested, timeout=1000):
        QTest.keyClick(window, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)


def _wheel(widget: QWidget, steps: int = -1) -> QWheelEvent:
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)
    return event


def test_wheel_scrolls_the_dialog_instead_of_changing_values(
        qtbot: QtBot, window: MainWindow) -> None:
    editor = window.persona_actions.new()
    qtbot.addWidget(editor)
    editor.resize(700, 500)  # a dialog that scrolls
    qtbot.waitExposed(editor)
    _activate(qtbot, editor)
    combo: QComboBox = editor.voice
    bar = next(area.verticalScrollBar() for area in editor.findChildren(QScrollArea)
               if area.isAncestorOf(combo))
    assert bar.maximum() > 0
    editor.name.setFocus()
    qtbot.waitUntil(editor.name.hasFocus)
    index, spin, speed = combo.currentIndex(), editor.speed, editor.speed.value()
    bar.setValue(bar.maximum() // 2)
    position = bar.value()
    _wheel(combo)
    _wheel(spin)
    assert combo.currentIndex() == index and spin.value() == speed
    assert bar.value() != position  # the dialog scrolled instead
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus)
    _wheel(combo)
    assert combo.currentIndex() != index  # a focused box still takes the wheel
    editor.done(0)


@pytest.mark.parametrize("answer", [False, True], ids=["keep", "discard"])
def test_escape_asks_before_discarding_edits(qtbot: QtBot, window: MainWindow,
                                             monkeypatch: pytest.MonkeyPatch,
                                             answer: bool) -> None:
    asked: list[str] = []

    def confirm(_parent: QWidget, what: str) -> bool:
        asked.append(what)
        return answer

    monkeypatch.setattr("app.ui.persona_editor.confirm_discard", confirm)
    editor: PersonaEditor = window.persona_actions.new()
    qtbot.waitExposed(editor)
    editor.prompt.setPlainText("You are Mika, a baker who talks about bread.")
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    assert asked == ["New persona"]
    assert editor.isVisible() is (not answer)
    if editor.isVisible():
        editor.done(0)


def test_escape_closes_an_unchanged_editor_without_asking(
        qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def confirm(_parent: QWidget, what: str) -> bool:
        asked.append(what)
        return True

    monkeypatch.setattr("app.ui.persona_editor.confirm_discard", confirm)
    editor = window.persona_actions.new()
    qtbot.waitExposed(editor)
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    assert not editor.isVisible() and asked == []
