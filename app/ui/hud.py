"""The latency HUD: per turn, end of the user's speech -> first reply audio, and where it went.

Numbers come from the pipeline's TimelineRecorder (built from the events themselves), shown
as offsets from the end of speech so speculative work that finished early reads as negative.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QVBoxLayout, QWidget

from app.core.languages import NATIVE_NAMES, language_name
from app.core.metrics import TurnTimeline
from app.ui import theme

STAGES: tuple[tuple[str, str], ...] = (
    ("end of turn confirmed", "end_of_turn"),
    ("transcript", "asr_final"),
    ("first token", "llm_first_token"),
    ("first chunk", "first_chunk_to_tts"),
    ("TTS audio", "tts_first_audio"),
    ("first sound", "first_sample_played"),
)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:+.0f} ms"


def stage_rows(turn: TurnTimeline) -> list[tuple[str, str]]:
    """(stage, offset from end of speech) for every stage reached, in the order they happened."""
    if turn.speech_end is None:
        return []
    reached = [(getattr(turn, attr), label) for label, attr in STAGES]
    timed = sorted((at, label) for at, label in reached if isinstance(at, float))
    answer = turn.first_answer_word
    if turn.acknowledgement and answer is not None:  # "Hmm," first: the answer came later
        timed = sorted([*timed, (answer, "first answer word")])
    rows = [(label, _ms(at - turn.speech_end)) for at, label in timed]
    if turn.prefix_reused is not None:
        rows.append(("prefix cache", "reused" if turn.prefix_reused else "cold"))
    if turn.language is not None:
        rows.append(("language heard", NATIVE_NAMES.get(turn.language)
                     or language_name(turn.language)))
    return rows


def headline(turn: TurnTimeline) -> str:
    v2v = turn.voice_to_voice
    if v2v is None:
        return f"Turn {turn.turn_id}: no audio" + (" (interrupted)" if turn.interrupted else "")
    return f"Turn {turn.turn_id}: {v2v * 1000:.0f} ms voice-to-voice"


class LatencyHud(QFrame):
    """A small card, toggled with Ctrl+L, showing the latest turn's timeline."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(6)
        caption = QLabel("LATENCY")
        caption.setObjectName("sectionLabel")
        layout.addWidget(caption)
        self.title = QLabel("No turn yet — say something.")
        self.title.setStyleSheet(f"font-weight: 600; color: {theme.ACCENT};")
        layout.addWidget(self.title)
        self._grid = QGridLayout()
        self._grid.setHorizontalSpacing(18)
        self._grid.setVerticalSpacing(2)
        layout.addLayout(self._grid)
        self._labels: list[QLabel] = []

    def show_turn(self, turn: TurnTimeline) -> None:
        self.title.setText(headline(turn))
        for label in self._labels:
            label.deleteLater()
        self._labels.clear()
        for i, (stage, value) in enumerate(stage_rows(turn)):
            name = QLabel(stage)
            name.setStyleSheet(f"color: {theme.MUTED_TEXT};")
            number = QLabel(value)
            self._grid.addWidget(name, i, 0)
            self._grid.addWidget(number, i, 1)
            self._labels += [name, number]
