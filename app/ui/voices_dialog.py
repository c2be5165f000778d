"""Hanasu → Voices: read a few sentences once to enrol a voice; see who is enrolled, when,
from how many seconds of speech; delete a voice (its file goes from the disk).

With a voice enrolled, the companion answers other voices only when they call it by name
(``app.core.voice_gate``). The reading is heard through the app's own microphone path
(``SetTap`` through ``VoicePipeline.send``) and turned into a voice print off the GUI thread;
the audio itself is never stored.
"""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.events import FloatAudio
from app.core.input_tap import InputTap
from app.core.listener_jobs import SetTap
from app.core.pipeline import VoicePipeline
from app.core.ports import PIPELINE_SAMPLE_RATE, SpeakerEncoder
from app.core.voice_gate import VoicePrint
from app.storage.voice_prints import MAX_NAME_CHARS, VoicePrintStore
from app.ui import keyboard, theme
from app.ui.plain import plain
from app.ui.tasks import BackgroundTask, Report

log = logging.getLogger(__name__)

SENTENCES = (
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.",
    "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",
    "The juice of lemons makes fine punch.",
)
"""Harvard sentences (public domain): every sound of English in a few lines. Any words in
any language do as well; what counts is the voice."""
READINGS = {
    "en": SENTENCES,
    "ja": (
        "今日はとても良い天気ですね。",
        "駅の前に新しいパン屋ができました。",
        "毎朝コーヒーを一杯飲んでから出かけます。",
        "週末は友達と公園を散歩しました。",
        "この本は面白くて、すぐに読み終わりました。",
        "夜になると、星がきれいに見えます。",
    ),
    "zh": (
        "今天天气很好，我们去公园散步吧。",
        "车站前面新开了一家面包店。",
        "我每天早上喝一杯咖啡再出门。",
        "周末我和朋友一起去吃了火锅。",
        "这本书很有意思，我一口气就看完了。",
        "晚上的星星看起来特别明亮。",
    ),
}
"""What the user reads, in the persona's main language (a Japanese speaker reading English
would enrol a voice they do not talk to it in); English for any other."""
TARGET_SPEECH_S = 15.0
MIN_SPEECH_S = 6.0
PIECE_S = 4.0
POLL_MS = 100
SPEECH_RMS = 0.01  # -40 dBFS


class VoiceSource(Protocol):
    """Where a reading comes from: the microphone (``MicrophoneSource``), a file in tests."""

    def start(self) -> None: ...

    def take(self) -> FloatAudio: ...

    def stop(self) -> None: ...


class MicrophoneSource:
    """The app's microphone, tapped from the running pipeline, which stops listening for
    turns meanwhile (it does not answer the sentences)."""

    def __init__(self, pipeline: VoicePipeline) -> None:
        self.pipeline = pipeline
        self.tap = InputTap()

    def start(self) -> None:
        self.pipeline.send(SetTap(self.tap))

    def take(self) -> FloatAudio:
        return self.tap.take()

    def stop(self) -> None:
        self.pipeline.send(SetTap(None))


def speech_seconds(audio: FloatAudio) -> float:
    """Seconds of 30 ms windows loud enough to be speech (a rough gauge for the bar)."""
    window = PIPELINE_SAMPLE_RATE * 3 // 100
    count = audio.size // window
    if count == 0:
        return 0.0
    levels = np.sqrt(np.mean(np.square(audio[:count * window].reshape(count, window)), axis=1))
    return float(np.count_nonzero(levels > SPEECH_RMS)) * 0.03


def make_print(encoder: SpeakerEncoder, name: str, audio: FloatAudio) -> VoicePrint:
    """The voice print of a reading: the mean of its 4 s pieces' embeddings (pieces with
    too little speech left out)."""
    size = int(PIECE_S * PIPELINE_SAMPLE_RATE)
    pieces = [audio[i:i + size] for i in range(0, audio.size, size)]
    spoken = [p for p in pieces if speech_seconds(p) >= 1.0] or [audio]
    embeddings = [encoder.embed(piece) for piece in spoken]
    return VoicePrint.from_embeddings(name, embeddings, time.time(), speech_seconds(audio))


def describe(voice: VoicePrint) -> str:
    when = time.strftime("%d %b %Y, %H:%M", time.localtime(voice.enrolled_at))
    return f"{voice.name} — enrolled {when}, from {voice.speech_s:.0f} s of speech"


class VoicesDialog(QDialog):
    def __init__(self, store: VoicePrintStore, encoder: SpeakerEncoder | None,
                 source: Callable[[], VoiceSource] | None,
                 on_change: Callable[[Sequence[VoicePrint]], None],
                 companion: str = "the companion", parent: QWidget | None = None,
                 language: str = "en", learning: bool = False,
                 on_learn: Callable[[bool], None] | None = None) -> None:
        """``source`` makes the recording source (None: nothing to record with yet);
        ``on_change`` gets every enrolled voice after an enrolment or a deletion;
        ``language`` picks what is read (``READINGS``); ``learning``: the user lets the
        app learn their voice from what they say, ``on_learn`` is told of a change."""
        super().__init__(parent)
        self.setWindowTitle("Voices")
        self.resize(600, 520)
        self.store, self.encoder, self.source_factory = store, encoder, source
        self.on_change = on_change
        self.source: VoiceSource | None = None
        self.audio: list[FloatAudio] = []
        self.task: BackgroundTask[VoicePrint] | None = None
        name = html.escape(companion)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.addWidget(QLabel("<b>Whose voice is answered</b>"))
        hint = QLabel(f"With a voice enrolled, {name} answers other voices only when they say "
                      f"“{name}”: people talking nearby are left alone. Nobody enrolled: every "
                      "voice is answered. A voice print is 256 numbers kept on this computer; "
                      "the recording is not kept.")
        hint.setObjectName("subtitle")
        hint.setWordWrap(True)
        layout.addWidget(hint)
        self.list = QListWidget()
        self.list.setAccessibleName("Enrolled voices")
        self.list.setStyleSheet(f"QListWidget::item:selected {{ color: {theme.TEXT}; }}")
        layout.addWidget(self.list, 1)
        self.empty = QLabel("Nobody is enrolled: every voice is answered.")
        self.empty.setObjectName("subtitle")
        layout.addWidget(self.empty)
        self.learn = QCheckBox(f"Learn my voice from what I say to {companion} (no reading "
                               "needed)")
        self.learn.setToolTip("While nobody is enrolled: after about six requests in one "
                              "voice, that voice is enrolled as “You (learnt)”, as if you had "
                              "read the sentences below. Only its 256 numbers are kept.")
        self.learn.setChecked(learning)
        self.learn.toggled.connect(on_learn or (lambda _on: None))
        layout.addWidget(self.learn)
        row = QHBoxLayout()
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(self.delete_selected)
        row.addWidget(self.delete_button)
        row.addStretch(1)
        layout.addLayout(row)

        layout.addWidget(QLabel("<b>Enrol a voice</b>"))
        enrol = QHBoxLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("Name, e.g. “Me”")
        self.name_edit.setMaxLength(MAX_NAME_CHARS)
        enrol.addWidget(self.name_edit, 1)
        self.start_button = QPushButton("Start reading")
        self.start_button.clicked.connect(self.start_reading)
        enrol.addWidget(self.start_button)
        self.finish_button = QPushButton("Finish")
        self.finish_button.clicked.connect(self.finish_reading)
        enrol.addWidget(self.finish_button)
        layout.addLayout(enrol)
        self.sentences = plain(QLabel("\n".join(READINGS.get(language, SENTENCES))))
        self.sentences.setWordWrap(True)
        layout.addWidget(self.sentences)
        self.progress = QProgressBar()
        self.progress.setRange(0, int(TARGET_SPEECH_S))
        self.progress.setFormat("%v of %m s of speech")
        layout.addWidget(self.progress)
        self.status = plain(QLabel())
        self.status.setObjectName("subtitle")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        closing = QHBoxLayout()
        closing.addStretch(1)
        closing.addWidget(close)
        layout.addLayout(closing)

        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self._poll)
        self.reload()
        self._show_idle()
        keyboard.prepare(self)

    # ---- the list ---------------------------------------------------------------------

    def reload(self) -> None:
        self.list.clear()
        for voice in self.store.all():
            self.list.addItem(QListWidgetItem(describe(voice)))
        has_any = self.list.count() > 0
        self.empty.setVisible(not has_any)
        self.delete_button.setEnabled(has_any)
        self.learn.setEnabled(not has_any)  # an enrolled voice is already known
        if has_any:
            self.list.setCurrentRow(0)

    def learnt(self, voice: VoicePrint) -> None:
        """The app learnt the user's voice: listed, and learning is over."""
        self.learn.blockSignals(True)
        self.learn.setChecked(False)
        self.learn.blockSignals(False)
        self.reload()
        self.status.setText(f"Your voice was learnt from what you said ({voice.speech_s:.0f} s "
                            "of speech) and is enrolled.")

    def names(self) -> list[str]:
        return [voice.name for voice in self.store.all()]

    def delete_selected(self) -> None:
        row = self.list.currentRow()
        voices = self.store.all()
        if not 0 <= row < len(voices):
            return
        try:
            self.store.delete(voices[row].name)
        except OSError as exc:
            self.status.setText(f"{voices[row].name}'s voice was not deleted: {exc}")
            return
        self.status.setText(f"{voices[row].name}'s voice print was deleted.")
        self._changed()

    def _changed(self) -> None:
        self.reload()
        self.on_change(self.store.all())

    # ---- enrolling --------------------------------------------------------------------

    def _show_idle(self) -> None:
        recording = self.source is not None
        computing = self.task is not None
        ready = self.encoder is not None and self.source_factory is not None
        self.start_button.setEnabled(ready and not recording and not computing)
        self.finish_button.setEnabled(recording)
        self.name_edit.setEnabled(not recording and not computing)
        self.sentences.setVisible(recording)
        if not ready and not self.status.text():
            self.status.setText("Enrolling needs the voice print model and a running "
                                "microphone: wait until the engines are loaded (the model "
                                "comes with pip install --no-deps Resemblyzer==0.1.4).")

    def attach(self, encoder: SpeakerEncoder | None,
               source: Callable[[], VoiceSource] | None) -> None:
        """The engines loaded (or restarted): record with these from the next reading on;
        a reading in progress keeps the source it started with."""
        waiting = self.encoder is None or self.source_factory is None
        self.encoder, self.source_factory = encoder, source
        if waiting and self.source is None and self.task is None:
            self.status.setText("")
        self._show_idle()

    def start_reading(self) -> None:
        name = self.name_edit.text().strip()
        if not name:
            self.status.setText("Give the voice a name first.")
            self.name_edit.setFocus()
            return
        if self.source_factory is None or self.encoder is None:
            return
        self.audio = []
        self.progress.setValue(0)
        self.source = self.source_factory()
        self.source.start()
        self._say_heard(0.0)
        self.timer.start()
        self._show_idle()

    def _poll(self) -> None:
        if self.source is None:
            return
        self.audio.append(self.source.take())
        spoken = speech_seconds(np.concatenate(self.audio))
        self.progress.setValue(min(int(spoken), int(TARGET_SPEECH_S)))
        self._say_heard(spoken)
        if spoken >= TARGET_SPEECH_S:
            self.finish_reading()

    def _say_heard(self, spoken: float) -> None:
        self.status.setText(f"Read the sentences aloud at your usual pace and distance: "
                            f"{min(spoken, TARGET_SPEECH_S):.0f} of {TARGET_SPEECH_S:.0f} s "
                            "of speech heard.")

    def finish_reading(self) -> None:
        source = self.source
        if source is None:
            return
        self.timer.stop()
        self.audio.append(source.take())
        source.stop()
        self.source = None
        audio = np.concatenate(self.audio) if self.audio else np.zeros(0, np.float32)
        self.audio = []
        if speech_seconds(audio) < MIN_SPEECH_S:
            self.status.setText(f"Too little speech was heard (at least {MIN_SPEECH_S:.0f} s "
                                "is needed): check the microphone and read again.")
            self._show_idle()
            return
        encoder, name = self.encoder, self.name_edit.text().strip()
        assert encoder is not None

        def work(_report: Report) -> VoicePrint:
            return make_print(encoder, name, audio)

        self.status.setText("Making the voice print…")
        task: BackgroundTask[VoicePrint] = BackgroundTask(work, "voice-print", self)
        task.finished.connect(self._made)
        task.failed.connect(self._failed)
        self.task = task
        task.start()
        self._show_idle()

    def _made(self, voice: object) -> None:
        self.task = None
        assert isinstance(voice, VoicePrint)
        try:
            self.store.save(voice)
        except (OSError, ValueError) as exc:
            self.status.setText(f"The voice print was not saved: {exc}")
        else:
            self.status.setText(f"{voice.name}'s voice is enrolled.")
            self.name_edit.clear()
            self._changed()
        self._show_idle()

    def _failed(self, error: object) -> None:
        self.task = None
        log.warning("voice print failed: %s", error)
        self.status.setText(f"The voice print could not be made: {error}")
        self._show_idle()

    def done(self, result: int) -> None:
        """Closing while reading stops the recording (the companion listens again)."""
        if self.source is not None:
            self.timer.stop()
            self.source.stop()
            self.source = None
        super().done(result)
