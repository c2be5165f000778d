"""The persona editor's "Speaking first" rows: a check-in after a long silence, a welcome
when the user comes back to the computer, and how often either may happen (the persona's
``[checkin]``; both off by default, so a persona never speaks first unless asked to)."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QFormLayout, QHBoxLayout, QSpinBox, QWidget

from app.personas.check_in import CheckInSettings

MAX_MINUTES = 24 * 60


def _minutes(low: int, high: int, value: float, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setSuffix(" min")
    box.setValue(max(low, min(high, round(value))))
    box.setToolTip(tip)
    return box


class CheckInRows:
    def __init__(self, form: QFormLayout, settings: CheckInSettings) -> None:
        self.quiet = _minutes(0, MAX_MINUTES, settings.after_minutes or 0,
                              "Say something after this long without a word from either "
                              "of you")
        self.quiet.setSpecialValueText("Never")
        self.quiet.setObjectName("checkInAfter")
        form.addRow("Check in after", self.quiet)
        self.welcome = QCheckBox("Welcome me back when I return to the computer after")
        self.welcome.setObjectName("welcomeBack")
        self.welcome.setChecked(settings.welcome_back)
        self.away = _minutes(1, MAX_MINUTES, settings.away_minutes,
                             "Away means no keyboard or mouse input for this long")
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.welcome)
        line.addWidget(self.away)
        line.addStretch(1)
        self.welcome.toggled.connect(self.away.setEnabled)
        self.away.setEnabled(settings.welcome_back)
        form.addRow("", row)
        self.every = _minutes(1, 7 * MAX_MINUTES, settings.every_minutes,
                              "At most one check-in or welcome per this many minutes")
        form.addRow("At most once per", self.every)

    def fields(self) -> tuple[object, ...]:
        return (self.quiet.value(), self.welcome.isChecked(), self.away.value(),
                self.every.value())

    def values(self) -> dict[str, object]:
        """The ``[checkin]`` table these rows describe."""
        return {"after_minutes": float(self.quiet.value()) or None,
                "welcome_back": self.welcome.isChecked(),
                "away_minutes": float(self.away.value()),
                "every_minutes": float(self.every.value())}
