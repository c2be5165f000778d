"""The main window's header row: the persona's name and the status line, the microphone
level, the Mute and latency-HUD buttons and the notices button."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.ui import icons
from app.ui.meter import LevelMeter


class WindowHeader:
    def __init__(self, notices_button: QWidget) -> None:
        self.layout = QHBoxLayout()
        self.layout.setSpacing(12)
        names = QVBoxLayout()
        names.setSpacing(0)
        self.title = QLabel()
        self.title.setObjectName("title")
        self.title.setTextFormat(Qt.TextFormat.PlainText)  # a card's name is not markup
        self.status = QLabel()
        self.status.setObjectName("statusText")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # "Getting <name> ready"
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status.setWordWrap(True)  # two lines rather than cut off in a narrow window
        self.status.setMinimumWidth(140)  # the level meter gives way first
        names.addWidget(self.title)
        names.addWidget(self.status)
        self.layout.addLayout(names, 1)
        self.meter = LevelMeter()
        self.layout.addWidget(self.meter, 0, Qt.AlignmentFlag.AlignVCenter)
        self.mute_button = QToolButton()
        self.mute_button.setObjectName("muteButton")
        self.mute_button.setCheckable(True)
        self.mute_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.mute_button.setIconSize(QSize(18, 18))
        self.mute_button.setToolTip("Mute or unmute the microphone (Ctrl+M)")
        self.layout.addWidget(self.mute_button)
        self.hud_button = QToolButton()
        self.hud_button.setObjectName("hudButton")
        self.hud_button.setCheckable(True)
        self.hud_button.setIcon(icons.gauge_icon())
        self.hud_button.setIconSize(QSize(18, 18))
        self.hud_button.setToolTip("Show latency (Ctrl+L)")
        self.layout.addWidget(self.hud_button)
        self.layout.addWidget(notices_button)
