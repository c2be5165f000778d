"""A label that shows a plain text in at most N lines at whatever width it gets, the last
line ending in "…" when the text is longer, so a long persona name or description never
spills onto the next row or widens the sidebar."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


def fit_lines(text: str, metrics: QFontMetrics, width: int, lines: int) -> str:
    """``text`` word-wrapped into at most ``lines`` lines of ``width`` px, the last elided."""
    words = text.split()
    out: list[str] = []
    current = ""
    for i, word in enumerate(words):
        candidate = f"{current} {word}" if current else word
        if not current or metrics.horizontalAdvance(candidate) <= width:
            current = candidate
            continue
        if len(out) == lines - 1:  # the last line takes the rest, elided
            current = " ".join([current, *words[i:]])
            break
        out.append(current)
        current = word
    if current:
        out.append(current)
    elide = Qt.TextElideMode.ElideRight
    return "\n".join(metrics.elidedText(line, elide, max(width, 1)) for line in out[:lines])


class ElidedLabel(QLabel):
    def __init__(self, text: str, lines: int = 1, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full_text = text
        self.lines = lines
        self.setTextFormat(Qt.TextFormat.PlainText)  # names and descriptions are not markup
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)

    def polish_height(self) -> None:
        """Fix the height to ``lines`` lines of the font its style sheet gives it."""
        self.ensurePolished()
        self.setFixedHeight(self.fontMetrics().lineSpacing() * self.lines + 2)
        self._refit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._refit()

    def _refit(self) -> None:
        self.setText(fit_lines(self.full_text, self.fontMetrics(), self.width(), self.lines))
