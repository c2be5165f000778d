"""Small framed pieces of the main window: rounded cards, the error banner, the loading card."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


def card(*, margins: int = 16) -> tuple[QFrame, QVBoxLayout]:
    """A rounded, bordered panel (styled by objectName in theme.STYLESHEET)."""
    frame = QFrame()
    frame.setObjectName("card")
    layout = QVBoxLayout(frame)
    layout.setContentsMargins(margins, margins, margins, margins)
    layout.setSpacing(10)
    return frame, layout


def section_label(text: str) -> QLabel:
    label = QLabel(text.upper())
    label.setObjectName("sectionLabel")
    return label


class Banner(QFrame):
    """A red strip for problems the user must know about (no mic, missing model)."""

    action = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(14, 10, 10, 10)
        self.text = QLabel()
        self.text.setWordWrap(True)
        layout.addWidget(self.text, 1)
        self.button = QPushButton()
        self.button.setObjectName("bannerAction")
        self.button.setAccessibleName("Fix the problem")  # replaced by the action's words
        self.button.clicked.connect(self.action.emit)
        layout.addWidget(self.button)
        self.hide()

    def show_message(self, message: str, action: str = "") -> None:
        self.text.setText(message)
        self.button.setText(action)
        self.button.setAccessibleName(action.rstrip("…") or "Fix the problem")
        self.button.setVisible(bool(action))
        self.show()


class ProgressCard(QFrame):
    """"Loading language model…" with an indeterminate bar while engines load."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("progressCard")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 10, 14, 12)
        layout.setSpacing(8)
        self.text = QLabel("Starting…")
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)
        self.bar.setFixedHeight(6)
        layout.addWidget(self.text)
        layout.addWidget(self.bar)

    def set_message(self, message: str) -> None:
        self.text.setText(message)
        self.show()
