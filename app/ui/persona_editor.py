"""The persona editor: name, description, prompt, greeting, language, voice, face and LLM
settings of one user persona, validated by the Persona model and saved atomically as TOML
into the user's persona folder.

The face rows are ``persona_face``'s; "Say the greeting" is ``greeting_preview``'s.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.languages import LANGUAGE_NAMES, SPEECH_LANGUAGES
from app.personas.cards import slug, unique_id
from app.personas.loader import IMAGE_SUFFIXES
from app.personas.model import AvatarStyle, Persona, languages_for
from app.personas.writer import PersonaSaveError, save_persona
from app.ui import keyboard, theme
from app.ui.cards import section_label
from app.ui.greeting_preview import KOKORO_VOICES, GreetingPreview
from app.ui.persona_check_in import CheckInRows
from app.ui.persona_face import FaceRows
from app.ui.sidebar import MAX_PICTURE_BYTES, load_picture
from app.ui.unsaved import confirm_discard

log = logging.getLogger(__name__)

LANGUAGES = tuple(LANGUAGE_NAMES.items())
"""The codes the language box offers (one table, in ``app.core.languages``)."""
FIELD_LABELS = {
    "id": "Id", "name": "Name", "description": "Description",
    "system_prompt": "System prompt", "greeting": "Greeting", "language": "Language",
    "voice": "Voice", "avatar": "Face", "llm": "Replies",
}
DEFAULT_TEMPERATURE = -0.1
"""The temperature spin box's lowest value, shown as "App default"."""
ERROR_STYLE = f"border: 1px solid {theme.DANGER};"


@dataclass(frozen=True)
class EditorContext:
    """Where the editor saves and what it must not clash with."""

    folder: Path
    taken_ids: frozenset[str]
    voices: Sequence[str] = KOKORO_VOICES
    preview: GreetingPreview | None = None


class PersonaEditor(QDialog):
    """Edit ``persona`` (None: a new one). ``saved`` holds the persona after Save;
    ``existing`` is its file when editing (kept as is, so its id never changes)."""

    def __init__(self, persona: Persona | None, context: EditorContext,
                 existing: Path | None = None, image: Path | None = None,
                 parent: QWidget | None = None, title: str | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("personaEditor")
        self.context = context
        self.original = persona
        self.existing = existing
        self.saved: Persona | None = None
        self.saved_path: Path | None = None
        self.setWindowTitle(title or (f"Edit {persona.name}" if persona else "New persona"))
        self.setMinimumSize(640, 600)
        self.resize(700, 820)
        start = persona or Persona(id="new", name="New persona",
                                   system_prompt="You are a friendly companion.",
                                   greeting="Hello! Nice to meet you.")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(18, 14, 18, 14)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 0, 12, 0)
        layout.setSpacing(8)
        self._text_section(layout, start)
        self._voice_section(layout, start)
        self._face_section(layout, start, image)
        self._llm_section(layout, start)
        self.check_in_rows = CheckInRows(self._form(layout, "Speaking first"), start.checkin)
        layout.addStretch(1)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        self.error = QLabel()
        self.error.setObjectName("editorError")
        self.error.setStyleSheet(f"color: {theme.DANGER};")
        self.error.setWordWrap(True)
        self.error.hide()
        outer.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.save_button = buttons.addButton("Save", QDialogButtonBox.ButtonRole.AcceptRole)
        self.save_button.setObjectName("primary")
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        outer.addWidget(buttons)
        self.face_rows.refresh()
        keyboard.prepare(self)
        self._opened_with = self.fields()

    def fields(self) -> tuple[object, ...]:
        """Everything the user can change here, to tell whether anything was."""
        return (self.name.text(), self.description.text(), self.prompt.toPlainText(),
                self.greeting.toPlainText(), self.language.currentText(),
                self.switch_languages.isChecked(), self.voice.currentText(),
                self.speed.value(), self.temperature.value(), self.reply_sentences.value(),
                self.avatar_style().model_dump_json(), self._image,
                self.face_rows.expression(), self.face_rows.layers_for("-"),
                self.check_in_rows.fields(), self.face_rows.live2d.live2d_for("-"))

    def reject(self) -> None:
        """Escape, Cancel or the close button: ask first when something was changed."""
        if self.saved is None and self.fields() != self._opened_with \
                and not confirm_discard(self, self.windowTitle().removeprefix("Edit ")):
            return
        super().reject()

    # ---- sections -------------------------------------------------------------------

    def _form(self, layout: QVBoxLayout, title: str) -> QFormLayout:
        """One form for every section (so the labels line up), a heading row per section."""
        if not hasattr(self, "_shared_form"):
            self._shared_form = QFormLayout()
            self._shared_form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
            self._shared_form.setHorizontalSpacing(14)
            self._shared_form.setVerticalSpacing(8)
            layout.addLayout(self._shared_form)
        self._shared_form.addRow(section_label(title))
        return self._shared_form

    def _text_section(self, layout: QVBoxLayout, p: Persona) -> None:
        form = self._form(layout, "Who")
        self.name = QLineEdit(p.name)
        self.name.setPlaceholderText("A name, e.g. Hana")
        form.addRow("Name", self.name)
        self.description = QLineEdit(p.description)
        self.description.setPlaceholderText("One line for the persona list")
        form.addRow("Description", self.description)
        self.prompt = QPlainTextEdit(p.system_prompt.strip())
        self.prompt.setPlaceholderText("Who the persona is and how they talk")
        self.prompt.setMinimumHeight(150)
        form.addRow("System prompt", self.prompt)
        self.greeting = QPlainTextEdit(p.greeting)
        self.greeting.setPlaceholderText("What they say when you pick them")
        self.greeting.setFixedHeight(64)
        form.addRow("Greeting", self.greeting)
        self.language = QComboBox()
        self.language.setEditable(True)
        for code, label in LANGUAGES:
            self.language.addItem(f"{code} — {label}", code)
        found = self.language.findData(p.language)
        if found >= 0:
            self.language.setCurrentIndex(found)
        else:
            self.language.setEditText(p.language)
        form.addRow("Language", self.language)
        self.switch_languages = QCheckBox(
            "Answer in the language the user speaks (English, Japanese, Chinese)")
        self.switch_languages.setChecked(p.auto_language)
        form.addRow("", self.switch_languages)
        hint = QLabel("The character rules (speak briefly, stay in character) are added to "
                      "every prompt, in the persona's language.")
        hint.setObjectName("subtitle")
        hint.setWordWrap(True)
        form.addRow("", hint)

    def _voice_section(self, layout: QVBoxLayout, p: Persona) -> None:
        form = self._form(layout, "Voice")
        self.voice = QComboBox()
        voices = list(self.context.voices)
        if p.voice.kokoro not in voices:
            voices.insert(0, p.voice.kokoro)
        self.voice.addItems(voices)
        self.voice.setCurrentText(p.voice.kokoro)
        self.speed = QDoubleSpinBox()
        self.speed.setRange(0.5, 2.0)
        self.speed.setSingleStep(0.05)
        self.speed.setDecimals(2)
        self.speed.setSuffix("x")
        self.speed.setValue(p.voice.speed)
        row = QHBoxLayout()
        row.addWidget(self.voice, 1)
        row.addSpacing(10)
        row.addWidget(QLabel("Speed"))
        row.addWidget(self.speed)
        form.addRow("Voice", row)
        self.preview_button = QPushButton("Say the greeting")
        self.preview_button.setObjectName("previewButton")
        self.preview_button.clicked.connect(self._preview)
        self.preview_status = QLabel(self.context.preview.note if self.context.preview else "")
        self.preview_status.setObjectName("subtitle")
        self.preview_status.setWordWrap(True)
        preview = QHBoxLayout()
        preview.addWidget(self.preview_button)
        preview.addWidget(self.preview_status, 1)
        form.addRow("", preview)
        if self.context.preview is not None:
            self.context.preview.status.connect(self.preview_status.setText)

    def _face_section(self, layout: QVBoxLayout, p: Persona, image: Path | None) -> None:
        self.face_rows = FaceRows(self, self._form(layout, "Face"), p.avatar, image,
                                  p.expression)
        self.colours = self.face_rows.colours

    def _llm_section(self, layout: QVBoxLayout, p: Persona) -> None:
        form = self._form(layout, "Replies")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(DEFAULT_TEMPERATURE, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(1)
        self.temperature.setSpecialValueText("App default (0.7)")
        self.temperature.setValue(DEFAULT_TEMPERATURE if p.llm.temperature is None
                                  else p.llm.temperature)
        self.temperature.setToolTip("Lower is steadier, higher is more playful")
        form.addRow("Temperature", self.temperature)
        self.reply_sentences = QSpinBox()
        self.reply_sentences.setRange(0, 20)
        self.reply_sentences.setSpecialValueText("App default (4 sentences)")
        self.reply_sentences.setSuffix(" sentences")
        self.reply_sentences.setValue(p.llm.reply_sentences or 0)
        self.reply_sentences.setToolTip("The most sentences one spoken reply may have")
        form.addRow("Reply length", self.reply_sentences)

    # ---- picture and face -----------------------------------------------------------

    @property
    def _image(self) -> Path | None:
        return self.face_rows.image

    def set_image(self, path: Path | None) -> None:
        self.face_rows.set_image(path)

    def avatar_style(self) -> AvatarStyle:
        return self.face_rows.avatar_style()

    # ---- preview --------------------------------------------------------------------

    def _preview(self) -> None:
        if self.context.preview is None:
            self.preview_status.setText("No voice is loaded yet.")
            return
        self.context.preview.start(self.greeting.toPlainText(), self.voice.currentText(),
                                   self.speed.value())

    # ---- result ---------------------------------------------------------------------

    def persona_id(self) -> str:
        if self.original is not None and self.existing is not None:
            return self.original.id  # an edit keeps its id (and its file)
        return unique_id(slug(self.name.text(), "persona"), self.context.taken_ids)

    def _image_name(self, persona_id: str) -> str | None:
        if self._image is None:
            return None
        if self._image.parent == self.context.folder:
            return self._image.name
        return f"{persona_id}{self._image.suffix.lower()}"

    def collect(self) -> Persona:
        """The persona the fields describe (raises pydantic's ValidationError)."""
        persona_id = self.persona_id()
        temperature = self.temperature.value()
        language = self.language_code()
        base = self.original.model_dump() if self.original is not None else {}
        data = {
            **base,
            "id": persona_id,
            "name": self.name.text().strip(),
            "description": self.description.text().strip(),
            "system_prompt": self.prompt.toPlainText().strip(),
            "greeting": self.greeting.toPlainText().strip(),
            "language": language,
            "languages": self._languages(language, base.get("languages", ())),
            "voice": {"kokoro": self.voice.currentText().strip(), "speed": self.speed.value()},
            "avatar": {**self.avatar_style().model_dump(), "image": self._image_name(persona_id),
                       "layers": self.face_rows.layers_for(persona_id),
                       "live2d": self.face_rows.live2d.live2d_for(persona_id)},
            "expression": self.face_rows.expression().model_dump(),
            "llm": {
                "temperature": None if temperature <= DEFAULT_TEMPERATURE + 1e-9 else temperature,
                "reply_sentences": self.reply_sentences.value() or None,
            },
            "checkin": self.check_in_rows.values(),
        }
        return Persona.model_validate(data)

    def _languages(self, language: str, before: Sequence[str]) -> list[str]:
        """One language, or (box ticked) the main one first and the others it had, or
        every language the app can hear and speak when it had none."""
        if not self.switch_languages.isChecked():
            return [language]
        return languages_for(language, before if len(before) > 1 else SPEECH_LANGUAGES)

    def language_code(self) -> str:
        """The picked language's code, or what the user typed."""
        text = self.language.currentText().strip()
        found = self.language.findText(text)
        return str(self.language.itemData(found)) if found >= 0 else text

    def _field_widget(self, field: str) -> QWidget | None:
        widgets: dict[str, QWidget] = {
            "name": self.name, "description": self.description, "system_prompt": self.prompt,
            "greeting": self.greeting, "language": self.language, "voice": self.voice,
        }
        return widgets.get(field)

    def show_error(self, message: str, field: str | None = None) -> None:
        fields: tuple[QWidget, ...] = (self.name, self.description, self.prompt, self.greeting,
                                       self.language, self.voice)
        for each in fields:
            each.setStyleSheet("")
        self.error.setText(message)
        self.error.show()
        marked = self._field_widget(field) if field else None
        if marked is not None:
            marked.setStyleSheet(ERROR_STYLE)
            marked.setFocus()

    def save(self) -> None:
        """Validate, copy a newly chosen picture into the folder, write the file."""
        try:
            persona = self.collect()
        except ValidationError as exc:
            self.show_error(*describe_error(exc))
            return
        try:
            self._copy_image(persona)
            self.face_rows.install(self.context.folder, persona.id)
            self.saved_path = save_persona(persona, self.context.folder, self.existing)
        except (PersonaSaveError, OSError, ValueError) as exc:
            self.show_error(f"Not saved: {exc}")
            return
        self.saved = persona
        self.accept()

    def _copy_image(self, persona: Persona) -> None:
        source, name = self._image, persona.avatar.image
        if source is None or name is None or source.parent == self.context.folder:
            return
        if source.suffix.lower() not in IMAGE_SUFFIXES:
            raise ValueError(f"{source.name} is not a PNG, JPEG or WebP picture")
        if not source.is_file() or source.stat().st_size > MAX_PICTURE_BYTES:
            raise ValueError(f"{source.name} is missing or larger than 20 MiB")
        if load_picture(source, 8) is None:
            raise ValueError(f"{source.name} is not a picture that can be shown")
        self.context.folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, self.context.folder / name)


def describe_error(exc: ValidationError) -> tuple[str, str | None]:
    """One line for the first problem, naming the field as the dialog labels it."""
    first = exc.errors()[0]
    loc = [str(part) for part in first["loc"]]
    field = loc[0] if loc else None
    label = FIELD_LABELS.get(field or "", field or "Persona")
    kind = str(first.get("type", ""))
    message = str(first["msg"]).removeprefix("Value error, ")
    if kind == "string_too_short":
        message = "must not be empty"
    elif kind == "string_too_long":
        limit = (first.get("ctx") or {}).get("max_length")
        message = f"is too long (at most {limit} characters)" if limit else message
    elif field == "id":
        message = "could not be made from the name; use letters or digits"
    elif len(loc) > 1:
        message = f"{loc[-1]}: {message}"
    return f"{label} {message}" if kind.startswith("string_too") else f"{label}: {message}", \
        field
