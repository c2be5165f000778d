"""Asking before unsaved edits are thrown away (Escape, Cancel or closing an editor)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget


def confirm_discard(parent: QWidget, what: str) -> bool:
    """True when the user chose to discard the changes to ``what``; the default button
    (Enter, or Escape again) keeps editing."""
    box = QMessageBox(QMessageBox.Icon.Question, "Discard changes?",
                      f"Discard your unsaved changes to {what}?", parent=parent)
    box.setTextFormat(Qt.TextFormat.PlainText)  # a persona's name is not markup
    discard = box.addButton("Discard changes", QMessageBox.ButtonRole.DestructiveRole)
    keep = box.addButton("Keep editing", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(keep)
    box.setEscapeButton(keep)
    box.exec()
    return box.clickedButton() is discard
