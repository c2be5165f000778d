"""The latency HUD: per turn, end of the user's speech -> first reply audio, and where it went.

Numbers come from the pipeline's TimelineRecorder (built from the events themselves), shown
as offsets from the end of speech so speculative work that finished early reads as negative.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QVBoxLayout, QWidget

from app.core.languages import language_name
from app.core.metrics import TurnTimeline
from app.ui import theme

STAGES: tuple[tuple[str, str], ...] = (
    ("transcript", "asr_final"),
    ("end of turn confirmed", "end_of_turn"),
    ("first token", "llm_first_token"),
    ("first chunk", "first_chunk_to_tts"),
    ("TTS audio", "tts_first_audio"),
    ("first sound", "first_sample_played"),
)
"""The timed rows, always all of them and in this order (a stage not reached shows
``NOT_REACHED``), so the panel does not reshuffle from one turn to the next."""
NOT_REACHED = "—"
SAME_AS_FIRST_SOUND = "(first sound)"
"""The first answer word's value when no acknowledgement ("Hmm,") played before it."""
ROW_NAMES = (*(label for label, _ in STAGES), "first answer word", "prefix cache",
             "language heard")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:+.0f} ms"


def stage_rows(turn: TurnTimeline) -> list[tuple[str, str]]:
    """(row name, value) for every row of ``ROW_NAMES``: each stage's offset from the end
    of speech (negative: speculative work finished before the user did), whether the
    persona's prefix was reused from the cache, and the language heard, in English like
    the rest of the window."""
    end = turn.speech_end
    rows = []
    for label, attr in STAGES:
        at = getattr(turn, attr)
        rows.append((label, _ms(at - end) if isinstance(at, float) and end is not None
                     else NOT_REACHED))
    answer = turn.answer_played if turn.acknowledgement else None
    rows.append(("first answer word", _ms(answer - end) if answer is not None and end is not None
                 else SAME_AS_FIRST_SOUND if not turn.acknowledgement else NOT_REACHED))
    reused = turn.prefix_reused
    rows.append(("prefix cache", NOT_REACHED if reused is None else "reused" if reused
                 else "cold"))
    rows.append(("language heard", language_name(turn.language) if turn.language
                 else NOT_REACHED))
    return rows


def headline(turn: TurnTimeline) -> str:
    v2v = turn.voice_to_voice
    if v2v is None:
        return f"Turn {turn.turn_id}: no audio" + (" (interrupted)" if turn.interrupted else "")
    return f"Turn {turn.turn_id}: {v2v * 1000:.0f} ms voice-to-voice"


NO_TURN = "No turn yet — say something."


class LatencyHud(QFrame):
    """A small card, toggled with Ctrl+L, showing the latest turn's timeline."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)
        caption = QLabel("LATENCY")
        caption.setObjectName("sectionLabel")
        layout.addWidget(caption)
        self.title = QLabel(NO_TURN)
        self.title.setStyleSheet(f"font-weight: 600; color: {theme.ACCENT};")
        self.title.setWordWrap(True)  # the window may be half a laptop screen wide
        layout.addWidget(self.title)
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(2)
        layout.addLayout(grid)
        self.values: dict[str, QLabel] = {}
        """Row name -> its value label; the rows are made once and keep their places."""
        for i, stage in enumerate(ROW_NAMES):
            name = QLabel(stage)
            name.setStyleSheet(f"color: {theme.MUTED_TEXT};")
            self.values[stage] = QLabel(NOT_REACHED)
            grid.addWidget(name, i, 0)
            grid.addWidget(self.values[stage], i, 1)

    def show_turn(self, turn: TurnTimeline) -> None:
        self.title.setText(headline(turn))
        for stage, value in stage_rows(turn):
            self.values[stage].setText(value)

    def reset(self) -> None:
        """No turn of the persona now shown (after a switch)."""
        self.title.setText(NO_TURN)
        for label in self.values.values():
            label.setText(NOT_REACHED)
