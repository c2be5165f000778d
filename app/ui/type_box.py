"""The text box under the conversation: for when speaking is not possible (no microphone,
a quiet office). What is typed goes through the same turn as speech: the reply is spoken
and shown, it is kept in the conversation, and typing over a reply interrupts it."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QWidget

MAX_TYPED_CHARS = 2000
"""A request, not a document: a pasted page would fill the prompt."""


class TypeBox(QWidget):
    def __init__(self, send: Callable[[str], bool], parent: QWidget | None = None) -> None:
        """``send(text)`` hands the words to the running pipeline; False while there is
        none (the words then stay in the box)."""
        super().__init__(parent)
        self._send = send
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(8)
        self.line = QLineEdit()
        self.line.setPlaceholderText("Or type to talk, then Enter")
        self.line.setAccessibleName("Type a message")
        self.line.setMaxLength(MAX_TYPED_CHARS)
        self.line.setClearButtonEnabled(True)
        self.line.returnPressed.connect(self.submit)
        self.button = QPushButton("Send")
        self.button.setAccessibleName("Send the typed message")
        self.button.setToolTip("Send what you typed (Enter); the reply is spoken and shown")
        self.button.clicked.connect(self.submit)
        self.button.setEnabled(False)
        self.line.textChanged.connect(lambda text: self.button.setEnabled(bool(text.strip())))
        layout.addWidget(self.line, 1)
        layout.addWidget(self.button)

    def submit(self) -> None:
        text = self.line.text().strip()
        if text and self._send(text):
            self.line.clear()
