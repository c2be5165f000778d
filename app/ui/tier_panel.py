"""The top of the Models dialog: the tier recommended for this machine and why, a choice of
another tier (the override), one button that downloads the chosen tier, and a download mirror.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QWidget,
)

from app.models.catalog import Catalog
from app.models.endpoint import ENV, check_endpoint
from app.models.errors import ModelError
from app.models.recommend import MachineAdvice
from app.models.tiers import FIX_COMMANDS, first_word, why_not
from app.models.units import human

MIRROR_HINT = "Download mirror (optional), e.g. https://hf-mirror.com"


def plain_label(text: str = "", object_name: str = "") -> QLabel:
    """A wrapped label that shows its text as is (never as rich text) and never gets
    squashed below its height (a squashed label clips the underscores of "Q4_K_M")."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    if object_name:
        label.setObjectName(object_name)
    return label


def shown_warnings(warnings: tuple[str, ...]) -> str:
    """The warnings as paragraphs, each starting with a capital, its fix command on a line
    of its own (wrapped only at spaces: it is copied from there)."""
    paragraphs = []
    for warning in warnings:
        for command in FIX_COMMANDS:
            warning = warning.replace(f" {command}", f"\n{command}")
        paragraphs.append(warning[:1].upper() + warning[1:])
    return "\n\n".join(paragraphs)


def download_stopped(problem: str, endpoint: str | None, mirror_field: str) -> str:
    """Why a download stopped; where the hub cannot be reached, where to set a mirror."""
    text = f"Download stopped: {problem}"
    if "cannot reach the model hub" in problem and endpoint is None:
        text += (f" If huggingface.co is blocked here, set a download mirror {mirror_field} "
                 f"(or {ENV}), then resume.")
    return text


class TierPanel(QFrame):
    """Shows the advice; emits the user's choices. GUI thread only."""

    tier_changed = Signal(str)
    download_all = Signal()
    mirror_changed = Signal(object)
    """The mirror URL (str), or None for the default."""

    def __init__(self, catalog: Catalog, advice: MachineAdvice, chosen: str | None,
                 mirror: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("progressCard")
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.catalog = catalog
        self.advice = advice
        rec = advice.recommendation
        grid = QGridLayout(self)
        grid.setContentsMargins(14, 10, 14, 10)
        grid.setVerticalSpacing(6)
        heading = QLabel("<b>Recommended for this machine</b>")
        grid.addWidget(heading, 0, 0, 1, 3)
        self.reason = plain_label(rec.reason)
        grid.addWidget(self.reason, 1, 0, 1, 3)
        self.warnings = plain_label(shown_warnings(rec.warnings), "subtitle")
        self.warnings.setVisible(bool(rec.warnings))
        self.warnings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(self.warnings, 2, 0, 1, 3)
        grid.addWidget(QLabel("Models for"), 3, 0)
        self.tiers = QComboBox()
        # long tier names must not widen the dialog past the screen: the combo elides them
        self.tiers.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.tiers.setMinimumContentsLength(24)
        for tier in catalog.tiers.values():
            problem = why_not(catalog, tier, advice.facts, advice.present)
            text = tier.title
            if tier.name == rec.tier.name:
                text += " (recommended)"
            elif problem is not None:
                text += " (not for this machine)"
            self.tiers.addItem(text, tier.name)
            self.tiers.setItemData(self.tiers.count() - 1, problem or first_word(
                tier.first_word_s), Qt.ItemDataRole.ToolTipRole)
        start = chosen if chosen in catalog.tiers else rec.tier.name
        self.tiers.setCurrentIndex(self.tiers.findData(start))
        self.tiers.currentIndexChanged.connect(self._changed)
        grid.addWidget(self.tiers, 3, 1, 1, 2)  # the whole width: tier names stay readable
        self.choice_note = plain_label("", "subtitle")
        grid.addWidget(self.choice_note, 4, 0, 1, 2)
        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("primary")
        self.download_button.clicked.connect(self.download_all.emit)
        grid.addWidget(self.download_button, 4, 2, Qt.AlignmentFlag.AlignRight
                       | Qt.AlignmentFlag.AlignTop)
        self.mirror = QLineEdit(mirror or "")
        self.mirror.setPlaceholderText(MIRROR_HINT)
        self.mirror.editingFinished.connect(self._mirror_edited)
        grid.addWidget(self.mirror, 5, 0, 1, 3)
        self.mirror_note = plain_label("", "subtitle")
        self.mirror_note.hide()
        grid.addWidget(self.mirror_note, 6, 0, 1, 3)
        grid.setColumnStretch(1, 1)
        self._describe_choice()

    @property
    def chosen(self) -> str:
        return str(self.tiers.currentData())

    def set_to_download(self, missing_bytes: int, busy: bool) -> None:
        """What the one button would fetch now, and whether downloads are running."""
        self.download_button.setVisible(missing_bytes > 0 and not busy)
        self.download_button.setText(f"Download {human(missing_bytes)}")
        self.tiers.setEnabled(not busy)

    def _changed(self) -> None:
        self._describe_choice()
        self.tier_changed.emit(self.chosen)

    def _describe_choice(self) -> None:
        tier = self.catalog.tiers[self.chosen]
        rec = self.advice.recommendation
        if tier.name == rec.tier.name:
            self.choice_note.setText("")
            self.choice_note.hide()
            return
        problem = why_not(self.catalog, tier, self.advice.facts, self.advice.present)
        text = f"Your choice: {tier.title}, {first_word(tier.first_word_s)} where it fits."
        if problem is not None:
            text = (f"Your choice asks more than this machine has ({problem}): replies may be "
                    "slow, or the model may not load.")
        self.choice_note.setText(text)
        self.choice_note.show()

    def _mirror_edited(self) -> None:
        text = self.mirror.text().strip()
        try:
            value = check_endpoint(text) if text else None
        except ModelError as exc:
            self.mirror_note.setText(str(exc))
            self.mirror_note.show()
            return
        self.mirror_note.hide()
        self.mirror_changed.emit(value)
