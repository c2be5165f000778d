"""Settings: audio devices, listening behaviour, model files or a model server, GPU layers
and the voice.

The device list comes from PortAudio, which can be slow to enumerate, so it is filled in
from a BackgroundTask. The dialog only builds a validated Settings; saving and restarting
the pipeline are the caller's job (see dialogs.py).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.storage.settings import Settings
from app.ui import keyboard
from app.ui.cards import section_label
from app.ui.llm_choice import LlmChoice
from app.ui.plain import plain
from app.ui.tasks import BackgroundTask, Report

DEFAULT_DEVICE = "System default"
AUTO_LAYERS = -1


def _device_names(_report: Report) -> tuple[list[str], list[str]]:
    from app.adapters.audio_devices import list_devices

    devices = list_devices()
    return [d.name for d in devices.inputs], [d.name for d in devices.outputs]


class _PathRow(QWidget):
    """A model path with Browse…; empty means "pick the best model automatically"."""

    def __init__(self, value: str | None, folder: bool = False) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit(value or "")
        self.edit.setPlaceholderText("Automatic (best model found)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        layout.addWidget(self.edit, 1)
        layout.addWidget(browse)
        self._folder = folder

    def _browse(self) -> None:
        start = self.edit.text() or str(Path.home())
        if self._folder:
            chosen = QFileDialog.getExistingDirectory(self, "Choose a model folder", start)
        else:
            chosen, _ = QFileDialog.getOpenFileName(self, "Choose a model file", start)
        if chosen:
            self.edit.setText(chosen)

    def value(self) -> str | None:
        return self.edit.text().strip() or None


RESTART_HINT = ("Saving restarts the voice engines and the audio devices with the new settings: "
                "a few seconds without listening, and the conversation starts over.")


class SettingsDialog(QDialog):
    def __init__(
        self, settings: Settings, parent: QWidget | None = None, load_devices: bool = True
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(560)
        self.settings = settings
        self.result_settings: Settings | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(22, 18, 22, 18)
        layout.setSpacing(10)
        body = QWidget()
        sections = QVBoxLayout(body)
        sections.setContentsMargins(0, 0, 8, 0)
        sections.setSpacing(10)
        self._audio_section(sections)
        self._listening_section(sections)
        self._models_section(sections)
        self.scroller = QScrollArea()  # a short screen scrolls the rows instead of squashing them
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroller.setWidget(body)
        self.scroller.setMinimumHeight(min(body.sizeHint().height(), 360))
        layout.addWidget(self.scroller, 1)
        self.error = plain(QLabel())
        self.error.setStyleSheet("color: #ff5d6c;")
        self.error.hide()
        layout.addWidget(self.error)
        self.restart_hint = QLabel(RESTART_HINT)
        self.restart_hint.setObjectName("subtitle")
        self.restart_hint.setWordWrap(True)
        layout.addWidget(self.restart_hint)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        apply = buttons.addButton("Save and restart", QDialogButtonBox.ButtonRole.AcceptRole)
        apply.setObjectName("primary")
        apply.setToolTip(RESTART_HINT)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._fit_to_screen(body)
        self._devices: BackgroundTask[tuple[list[str], list[str]]] | None = None
        if load_devices:
            self._devices = BackgroundTask(_device_names, "list-devices", self)
            self._devices.finished.connect(self._fill_devices)
            self._devices.failed.connect(lambda e: self._device_note(f"Cannot list devices: {e}"))
            self._devices.start()
        keyboard.prepare(self)

    def _fit_to_screen(self, body: QWidget) -> None:
        """Tall enough to show every row without scrolling, where the screen allows."""
        whole = self.sizeHint().height() - self.scroller.sizeHint().height() \
            + body.sizeHint().height() + 4
        screen = self.screen().availableGeometry().height() if self.screen() else whole
        self.resize(self.sizeHint().width(), min(whole, screen - 60))

    # ---- sections --------------------------------------------------------------------

    def _form(self, layout: QVBoxLayout, title: str) -> QFormLayout:
        layout.addWidget(section_label(title))
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setHorizontalSpacing(14)
        form.setVerticalSpacing(8)
        layout.addLayout(form)
        return form

    def _audio_section(self, layout: QVBoxLayout) -> None:
        form = self._form(layout, "Audio")
        self.input_combo = self._device_combo(self.settings.input_device)
        self.output_combo = self._device_combo(self.settings.output_device)
        form.addRow("Microphone", self.input_combo)
        form.addRow("Speaker", self.output_combo)
        self.device_note = plain(QLabel("Looking for devices…"))  # device names
        self.device_note.setObjectName("subtitle")
        form.addRow("", self.device_note)

    def _listening_section(self, layout: QVBoxLayout) -> None:
        form = self._form(layout, "Listening")
        self.vad_slider = QSlider(Qt.Orientation.Horizontal)
        self.vad_slider.setRange(10, 95)
        self.vad_slider.setValue(round(self.settings.vad_threshold * 100))
        self.vad_value = QLabel()
        self.vad_slider.valueChanged.connect(self._show_vad)
        self._show_vad(self.vad_slider.value())
        row = QHBoxLayout()
        row.addWidget(self.vad_slider, 1)
        row.addWidget(self.vad_value)
        form.addRow("Speech threshold", row)
        self.end_of_turn = QSpinBox()
        self.end_of_turn.setRange(200, 2000)
        self.end_of_turn.setSingleStep(40)
        self.end_of_turn.setSuffix(" ms")
        self.end_of_turn.setValue(self.settings.end_of_turn_ms)
        self.end_of_turn.setToolTip("How long you must be quiet before Hanasu answers")
        form.addRow("End-of-turn silence", self.end_of_turn)
        self.barge_in = QCheckBox("Let me interrupt while it speaks")
        self.barge_in.setChecked(self.settings.barge_in)
        form.addRow("Barge-in", self.barge_in)
        self.echo_cancellation = QCheckBox("Don't let it hear itself (for loudspeakers)")
        self.echo_cancellation.setChecked(self.settings.echo_cancellation)
        form.addRow("Echo cancellation", self.echo_cancellation)
        self.smart_turn = QCheckBox("Answer as soon as I sound finished")
        self.smart_turn.setChecked(self.settings.smart_turn)
        form.addRow("Smart end of turn", self.smart_turn)
        self.speak_greeting = QCheckBox("Say hello when I pick a persona")
        self.speak_greeting.setChecked(self.settings.speak_greeting)
        form.addRow("Greeting", self.speak_greeting)
        self.live2d_terms = QComboBox()  # the answer to the Cubism licence (live2d_terms.py)
        self.live2d_terms.addItem("Ask before the first Live2D model is shown", None)
        if self.settings.live2d_terms is not None:
            self.live2d_terms.addItem("Cubism licence accepted" if self.settings.live2d_terms
                                      else "Cubism licence declined: faces instead",
                                      self.settings.live2d_terms)
            self.live2d_terms.setCurrentIndex(1)
        form.addRow("Live2D models", self.live2d_terms)
        self.memory_extraction = QComboBox()
        for label, value in (("Automatic (not with the small built-in model)", None),
                             ("On", True), ("Off", False)):
            self.memory_extraction.addItem(label, value)
        self.memory_extraction.setCurrentIndex(
            self.memory_extraction.findData(self.settings.memory_extraction))
        self.memory_extraction.setToolTip(
            "After each exchange, while nothing is said, the language model notes facts "
            "you mention about yourself (on this computer); see them under Memories")
        form.addRow("Note facts about me", self.memory_extraction)

    def _models_section(self, layout: QVBoxLayout) -> None:
        form = self._form(layout, "Models and voice")
        s = self.settings
        self.llm_path = _PathRow(s.llm_path)
        self.asr_path = _PathRow(s.asr_path, folder=True)
        self.tts_path = _PathRow(s.tts_path)
        self.llm_choice = LlmChoice(s, self.llm_path)  # this computer, or a server
        form.addRow("Language model", self.llm_choice)
        form.addRow("Speech recognizer", self.asr_path)
        form.addRow("Voice model", self.tts_path)
        self.gpu_layers = QSpinBox()
        self.gpu_layers.setRange(AUTO_LAYERS, 999)
        self.gpu_layers.setSpecialValueText("Auto")
        self.gpu_layers.setValue(AUTO_LAYERS if s.n_gpu_layers is None else s.n_gpu_layers)
        form.addRow("GPU layers", self.gpu_layers)
        self.voice = QLineEdit(s.tts_voice or "")
        self.voice.setPlaceholderText("The persona's own voice")
        form.addRow("Voice", self.voice)
        self.speed = QDoubleSpinBox()
        self.speed.setRange(0.5, 2.0)
        self.speed.setSingleStep(0.05)
        self.speed.setSuffix(" x")
        self.speed.setValue(s.tts_speed)
        form.addRow("Speaking speed", self.speed)

    def _device_combo(self, current: str | None) -> QComboBox:
        combo = QComboBox()
        combo.addItem(DEFAULT_DEVICE, None)
        if current:
            combo.addItem(current, current)
            combo.setCurrentIndex(1)
        return combo

    def _show_vad(self, value: int) -> None:
        self.vad_value.setText(f"{value / 100:.2f}")

    # ---- devices ---------------------------------------------------------------------

    def _fill_devices(self, names: tuple[list[str], list[str]]) -> None:
        for combo, found in zip((self.input_combo, self.output_combo), names, strict=True):
            current = combo.currentData()
            combo.clear()
            combo.addItem(DEFAULT_DEVICE, None)
            for name in found:
                combo.addItem(name, name)
            if current and current not in found:
                combo.addItem(f"{current} (not connected)", current)
            index = combo.findData(current)
            combo.setCurrentIndex(max(0, index))
        self._device_note(f"{len(names[0])} microphones, {len(names[1])} speakers found")

    def _device_note(self, text: str) -> None:
        self.device_note.setText(text)

    # ---- result ----------------------------------------------------------------------

    def collect(self) -> Settings:
        """The edited settings, validated (raises pydantic's ValidationError)."""
        layers = self.gpu_layers.value()
        return self.settings.replace(
            input_device=self.input_combo.currentData(),
            output_device=self.output_combo.currentData(),
            vad_threshold=self.vad_slider.value() / 100,
            end_of_turn_ms=self.end_of_turn.value(),
            barge_in=self.barge_in.isChecked(),
            echo_cancellation=self.echo_cancellation.isChecked(),
            smart_turn=self.smart_turn.isChecked(),
            speak_greeting=self.speak_greeting.isChecked(),
            live2d_terms=self.live2d_terms.currentData(),
            memory_extraction=self.memory_extraction.currentData(),
            llm_path=self.llm_path.value(),
            **self.llm_choice.values(),
            asr_path=self.asr_path.value(),
            tts_path=self.tts_path.value(),
            n_gpu_layers=None if layers == AUTO_LAYERS else layers,
            tts_voice=self.voice.text().strip() or None,
            tts_speed=round(self.speed.value(), 2),
        )

    def _accept(self) -> None:
        trouble = self.llm_choice.problem()
        if trouble:
            self.error.setText(trouble)
            self.error.show()
            return
        try:
            self.result_settings = self.collect()
        except ValidationError as exc:
            first = exc.errors()[0]
            self.error.setText(f"{'.'.join(map(str, first['loc']))}: {first['msg']}")
            self.error.show()
            return
        self.accept()
