"""Keyboard and screen-reader basics every window and dialog shares.

``prepare(root)`` (at the end of a window's or dialog's constructor) gives each
interactive widget an accessible name (its own text, its form label, its tooltip or its
placeholder, in that order, unless it was named on purpose) and stops the mouse wheel
from changing a combo box, spin box or slider the pointer merely passes over while the
user scrolls a dialog: the wheel changes a value only once the widget has the focus.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFormLayout,
    QLayout,
    QLineEdit,
    QPlainTextEdit,
    QScrollBar,
    QSlider,
    QTextEdit,
    QWidget,
)

log = logging.getLogger(__name__)

INTERACTIVE = (QAbstractButton, QComboBox, QAbstractSpinBox, QLineEdit, QTextEdit,
               QPlainTextEdit, QAbstractItemView, QSlider)
WHEEL_GUARDED = (QComboBox, QAbstractSpinBox, QSlider)
_COMPOUND = (QComboBox, QAbstractSpinBox, QLineEdit)
"""Widgets whose inner line edit, list or buttons (a line edit's clear button) are theirs:
they carry the name."""


def interactive_widgets(root: QWidget) -> list[QWidget]:
    """The widgets of ``root``'s window a keyboard or screen-reader user operates."""
    found: list[QWidget] = []
    for widget in root.findChildren(QWidget):
        if not isinstance(widget, INTERACTIVE) or isinstance(widget, QScrollBar):
            continue
        if widget.window() is not root.window():  # a combo box's popup list
            continue
        if _inside_compound(widget, root):
            continue
        found.append(widget)
    return found


def _inside_compound(widget: QWidget, root: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None and parent is not root:
        if isinstance(parent, _COMPOUND):
            return True
        parent = parent.parentWidget()
    return False


def clean(text: str) -> str:
    """A label's words without mnemonics (``&Save``), a trailing colon or ellipsis."""
    text = text.replace("&&", "\0").replace("&", "").replace("\0", "&")
    return text.strip().rstrip(":…").rstrip(".").strip()


def _form_labels(root: QWidget) -> dict[int, str]:
    """Each form field's widgets (nested rows too) -> the text of its row's label."""
    labels: dict[int, str] = {}

    def widgets_in(layout: QLayout | None) -> list[QWidget]:
        out: list[QWidget] = []
        for i in range(layout.count() if layout is not None else 0):
            item = layout.itemAt(i) if layout is not None else None
            if item is None:
                continue
            if (widget := item.widget()) is not None:
                out.append(widget)
            else:
                out.extend(widgets_in(item.layout()))
        return out

    for form in root.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            label = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            field = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
            text = getattr(label.widget(), "text", None) if label is not None else None
            if field is None or not callable(text) or not clean(text()):
                continue
            field_widget = field.widget()
            widgets = [field_widget] if field_widget is not None else widgets_in(field.layout())
            for widget in widgets:
                for each in (widget, *widget.findChildren(QWidget)):
                    labels.setdefault(id(each), clean(text()))
    return labels


QT_NAMES = {"qt_menubar_ext_button": "More menus"}
"""Widgets Qt itself adds, by object name."""


def derive_name(widget: QWidget, form_labels: dict[int, str]) -> str:
    if widget.objectName() in QT_NAMES:
        return QT_NAMES[widget.objectName()]
    if isinstance(widget, QAbstractButton) and clean(widget.text()):
        return clean(widget.text())
    if id(widget) in form_labels:
        return form_labels[id(widget)]
    tip = widget.toolTip().strip().splitlines()
    if tip and clean(tip[0]):
        return clean(tip[0])
    if isinstance(widget, QLineEdit | QPlainTextEdit | QTextEdit) and widget.placeholderText():
        return clean(widget.placeholderText())
    return ""


class WheelGuard(QObject):
    """Installed on combo, spin and slider widgets: a wheel event over one without the
    focus scrolls the scroll area around it instead (or goes to its parent)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget)
                or watched.hasFocus()):
            return False
        area = _scroll_area(watched)
        if area is None:
            event.ignore()  # not accepted: Qt offers it to the parent widgets
        else:
            QApplication.sendEvent(area.viewport(), event)
        return True


def _scroll_area(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea) and not isinstance(parent, QAbstractItemView):
            return parent
        parent = parent.parentWidget()
    return None


def prepare(root: QWidget) -> None:
    """Accessible names and the wheel guard for every interactive widget under ``root``."""
    labels = _form_labels(root)
    guard = root.findChild(WheelGuard, "wheelGuard")
    if guard is None:
        guard = WheelGuard(root)
        guard.setObjectName("wheelGuard")
    for widget in interactive_widgets(root):
        if not widget.accessibleName():
            name = derive_name(widget, labels)
            if name:
                widget.setAccessibleName(name)
            else:
                log.debug("no accessible name for %s %s", type(widget).__name__,
                          widget.objectName())
        if isinstance(widget, WHEEL_GUARDED):
            widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # not focus by the wheel
            widget.installEventFilter(guard)
