"""Text a user, a card or a server supplied, shown as text and never as Qt rich text.

A ``QLabel``, a tooltip or a ``QMessageBox`` guesses rich text from a tag in its text, so a
card named ``<img src="/some/local/file.png">`` would show that file. Labels fed such text
are set to ``Qt.PlainText``; message boxes come from here; tooltips (always guessed) get
the text escaped into rich text that displays it literally.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget


def plain(label: QLabel) -> QLabel:
    """``label``, set to show its text as is."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def plain_tooltip(text: str) -> str:
    """A tooltip that shows ``text`` literally, line breaks kept."""
    if not text:
        return ""
    lines = html.escape(text).split("\n")
    return "<p style='white-space:pre-wrap'>" + "<br>".join(lines) + "</p>"


def message_box(parent: QWidget | None, icon: QMessageBox.Icon, title: str, text: str,
                buttons: QMessageBox.StandardButton) -> QMessageBox:
    """A modal message box whose text is plain."""
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    return box


def ask(parent: QWidget | None, title: str, question: str) -> bool:
    """True when the user answers Yes (as ``QMessageBox.question``, with plain text)."""
    yes, no = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No
    box = message_box(parent, QMessageBox.Icon.Question, title, question, yes | no)
    return QMessageBox.StandardButton(box.exec()) == yes


def warn(parent: QWidget | None, title: str, message: str) -> None:
    """A warning the user must acknowledge."""
    message_box(parent, QMessageBox.Icon.Warning, title, message,
                QMessageBox.StandardButton.Ok).exec()
