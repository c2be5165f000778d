"""Every input in every dialog draws its value (or, when empty, a placeholder for it).

A screenshot test that only checks a PNG exists let the Settings spin boxes render empty for a
release (their text field was one pixel wide). These tests render each input and count the
text-coloured pixels inside the part of the widget that holds the text.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QDialog,
    QLineEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.storage.settings import Settings
from app.ui.window import MainWindow

INK_LUMINANCE = 110
"""Text (#e8eaf2) and placeholder text (#8a90a6) are brighter than this; the field
backgrounds and borders of the dark theme (#242838, #2c3144) are far darker."""
MIN_INK_PIXELS = 20
"""One short word ("Auto") at 13 px lights well over a hundred pixels."""
COMBO_ARROW_WIDTH = 28


def _luminance(image: QImage, x: int, y: int) -> float:
    colour = image.pixelColor(x, y)
    return 0.299 * colour.red() + 0.587 * colour.green() + 0.114 * colour.blue()


def ink_pixels(widget: QWidget) -> int:
    """Bright pixels where the widget shows its text (spin buttons and combo arrows left out)."""
    image = widget.grab().toImage()
    area = QRect(0, 0, image.width(), image.height())
    if isinstance(widget, QAbstractSpinBox):
        editor = widget.findChild(QLineEdit)
        assert editor is not None
        area = editor.geometry()
    elif isinstance(widget, QComboBox):
        area = QRect(0, 0, image.width() - COMBO_ARROW_WIDTH, image.height())
    ratio = image.devicePixelRatio()
    return sum(
        1
        for x in range(int(area.left() * ratio), int((area.right() + 1) * ratio))
        for y in range(int(area.top() * ratio), int((area.bottom() + 1) * ratio))
        if 0 <= x < image.width() and 0 <= y < image.height()
        and _luminance(image, x, y) > INK_LUMINANCE
    )


def inputs_of(dialog: QDialog) -> list[QWidget]:
    """Spin boxes, combo boxes and line edits the user sees (not the editors inside them)."""
    found: list[QWidget] = []
    for widget in dialog.findChildren(QWidget):
        if not widget.isVisible():
            continue
        if isinstance(widget, QLineEdit) and isinstance(
            widget.parentWidget(), (QAbstractSpinBox, QComboBox)
        ):
            continue
        if isinstance(widget, (QAbstractSpinBox, QComboBox, QLineEdit)):
            found.append(widget)
    return found


def describe(widget: QWidget) -> str:
    if isinstance(widget, QAbstractSpinBox):
        return f"{type(widget).__name__} showing {widget.text()!r}"
    if isinstance(widget, QComboBox):
        return f"QComboBox showing {widget.currentText()!r}"
    if isinstance(widget, QLineEdit):
        return f"QLineEdit {widget.text()!r} / placeholder {widget.placeholderText()!r}"
    return type(widget).__name__


def assert_every_input_drawn(dialog: QDialog) -> None:
    inputs = inputs_of(dialog)
    assert inputs, "the dialog shows no inputs at all"
    blank = [f"{describe(w)}: {ink_pixels(w)} px" for w in inputs
             if ink_pixels(w) < MIN_INK_PIXELS]
    assert not blank, "inputs that draw no value: " + "; ".join(blank)
    for widget in inputs:
        if isinstance(widget, QLineEdit):
            assert widget.text() or widget.placeholderText(), (
                f"{describe(widget)}: an empty field needs a placeholder saying what goes there")


@pytest.mark.parametrize("settings", [
    Settings(),
    Settings(end_of_turn_ms=900, n_gpu_layers=12, tts_speed=1.25, tts_voice="af_heart"),
], ids=["defaults", "changed"])
def test_settings_dialog_draws_every_value(qtbot: QtBot, window: MainWindow,
                                           settings: Settings) -> None:
    from app.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(settings, window, load_devices=False)
    dialog._fill_devices((["Built-in Microphone", "USB Mic"], ["Speakers", "Headphones"]))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert_every_input_drawn(dialog)


def test_an_empty_box_is_caught(qtbot: QtBot, window: MainWindow) -> None:
    """The check itself: a spin box whose text field collapsed (the old bug) counts as blank."""
    from app.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(), window, load_devices=False)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    spin = next(w for w in inputs_of(dialog) if isinstance(w, QAbstractSpinBox))
    assert ink_pixels(spin) >= MIN_INK_PIXELS
    spin.setButtonSymbols(QAbstractSpinBox.ButtonSymbols.NoButtons)
    qtbot.wait(20)
    assert ink_pixels(spin) < MIN_INK_PIXELS
