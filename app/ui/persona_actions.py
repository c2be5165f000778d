"""Carries out the sidebar's persona actions for the window: New, Edit, Duplicate, Delete,
Import and Export of character cards, and reloads the persona list afterwards (no restart).

Everything runs on the GUI thread: the files involved are small (a persona is a few
kilobytes, a card a few megabytes at most, checked before reading). Problems are shown in
a message box and in the window's notice area; a malformed persona file is listed there
with its reason and never hides the others.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from app.personas.card_export import export_card_png
from app.personas.card_file import CardError
from app.personas.cards import import_card, slug, unique_id
from app.personas.loader import PersonaLibrary, load_persona_library, user_personas_dir
from app.personas.model import Persona
from app.personas.writer import PersonaSaveError, delete_persona_file
from app.storage.safe_read import MIB
from app.ui.greeting_preview import GreetingPreview, sounddevice_player, voice_engine
from app.ui.persona_editor import EditorContext, PersonaEditor
from app.ui.plain import ask, warn

if TYPE_CHECKING:
    from app.ui.window import MainWindow

log = logging.getLogger(__name__)


def _audio_off() -> bool:
    import os

    return os.environ.get("HANASU_NO_AUDIO") == "1"


def _can_ask() -> bool:
    """Modal questions need a screen someone looks at (not the offscreen test platform)."""
    from PySide6.QtGui import QGuiApplication

    return QGuiApplication.platformName() != "offscreen"


class PersonaActions(QObject):
    """Owns the persona menu and answers the sidebar's requests for ``window``."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.last_error = ""
        self.editor: PersonaEditor | None = None
        """The open editor (tests drive it)."""
        self.interactive = _can_ask()
        """Ask before deleting and show failures in a message box (not offscreen)."""
        sidebar = window.sidebar
        sidebar.new_requested.connect(self.new)
        sidebar.edit_requested.connect(self.edit)
        sidebar.duplicate_requested.connect(self.duplicate)
        sidebar.delete_requested.connect(self.delete)
        sidebar.import_requested.connect(self.choose_card)
        sidebar.export_requested.connect(self.choose_export)
        sidebar.card_dropped.connect(lambda path: self.import_card_file(Path(path)))
        self._build_menu()
        self._show(window.library)

    def _build_menu(self) -> None:
        menu = self.window.menuBar().addMenu("&Personas")
        items = (
            ("&New persona…", lambda: self.new()),
            ("&Edit…", lambda: self._on_current(self.edit)),
            ("&Duplicate…", lambda: self._on_current(self.duplicate)),
            ("De&lete…", lambda: self._on_current(self.delete)),
            None,
            ("&Import character card…", lambda: self.choose_card()),
            ("E&xport as character card…", lambda: self._on_current(self.choose_export)),
        )
        for item in items:
            if item is None:
                menu.addSeparator()
                continue
            action = QAction(item[0], self.window)
            action.triggered.connect(item[1])
            menu.addAction(action)
        self.menu = menu

    def _on_current(self, act: object) -> None:
        persona = self.window.sidebar.current_persona()
        if persona is not None and callable(act):
            act(persona)

    # ---- library --------------------------------------------------------------------

    @property
    def folder(self) -> Path:
        return user_personas_dir()

    def _show(self, library: PersonaLibrary, select: str | None = None) -> None:
        images = {p.id: library.image_path(p) for p in library.personas}
        self.window.sidebar.set_personas(library.personas, library.bundled, images, select)

    def reload(self, select: str | None = None) -> PersonaLibrary:
        """Read the personas again; the sidebar shows them, the current persona is
        refreshed if its file changed, or replaced by the default if it is gone."""
        try:
            library = load_persona_library()
        except ValueError as exc:  # no persona at all: keep what is shown
            self._fail("Personas could not be reloaded", str(exc))
            return self.window.library
        self.window.library = library
        for message in library.messages:
            self.window.add_notice(message)
        current = self.window.persona
        self._show(library, current.id)  # quietly; a new selection below switches to it
        try:
            fresh = library.get(current.id)
        except KeyError:
            self.window.sidebar.select(library.default.id)
            return library
        if fresh != current:
            self.window.refresh_persona(fresh)
        if select is not None and select != current.id:
            self.window.sidebar.select(select)
        return library

    # ---- editor ---------------------------------------------------------------------

    def _context(self) -> EditorContext:
        pipeline = self.window.pipeline
        tts = pipeline.engines.tts if pipeline is not None else None
        voices, synthesize, note = voice_engine(tts)
        override = self.window.settings.tts_voice
        if override:  # Settings > Voice wins over every persona's own voice
            note = (f"Settings use the voice {override} for every persona: clear it there "
                    "to hear this one.")
        play = None if _audio_off() else sounddevice_player(self.window.settings.output_device)
        preview = GreetingPreview(synthesize, play, note, self)
        taken = frozenset(p.id for p in self.window.library.personas) | frozenset(
            path.stem for path in _existing_files(self.folder)
        )
        return EditorContext(self.folder, taken, voices, preview)

    def open_editor(self, persona: Persona | None, existing: Path | None,
                    image: Path | None, title: str | None = None) -> PersonaEditor:
        """The editor, not yet shown (tests fill and save it directly)."""
        editor = PersonaEditor(persona, self._context(), existing, image, self.window, title)
        editor.finished.connect(lambda _code: self._edited(editor))
        self.editor = editor
        return editor

    def _edited(self, editor: PersonaEditor) -> None:
        if editor.saved is not None:
            self.reload(select=editor.saved.id)

    def new(self) -> PersonaEditor:
        editor = self.open_editor(None, None, None)
        editor.open()
        return editor

    def edit(self, persona: Persona) -> PersonaEditor | None:
        library = self.window.library
        if library.is_builtin(persona.id):
            self._fail("Built-in persona", f"{persona.name} is built in and read-only: "
                       "duplicate it to make your own version.")
            return None
        editor = self.open_editor(persona, library.sources.get(persona.id),
                                  library.image_path(persona))
        editor.open()
        return editor

    def duplicate(self, persona: Persona) -> PersonaEditor:
        library = self.window.library
        taken = {p.id for p in library.personas}
        copy = persona.model_copy(update={
            "id": unique_id(slug(f"{persona.id}-copy", "persona"), taken),
            "name": f"{persona.name} (copy)"[:40],
            "order": persona.order,
        })
        editor = self.open_editor(copy, None, library.image_path(persona),
                                  title=f"Duplicate {persona.name}")
        editor.open()
        return editor

    # ---- delete ---------------------------------------------------------------------

    def delete(self, persona: Persona, confirm: bool = True) -> bool:
        library = self.window.library
        path = library.sources.get(persona.id)
        if library.is_builtin(persona.id) or path is None:
            self._fail("Built-in persona", f"{persona.name} is built in and cannot be deleted.")
            return False
        if confirm and self.interactive:
            question = (f"Delete {persona.name}? Its file {path.name} is removed; its saved "
                        "conversations stay in the history.")
            if not ask(self.window, "Delete persona", question):
                return False
        try:
            delete_persona_file(path)
            self._delete_unshared_image(persona, library)
        except PersonaSaveError as exc:
            self._fail("Persona not deleted", str(exc))
            return False
        self.reload()
        return True

    def _delete_unshared_image(self, persona: Persona, library: PersonaLibrary) -> None:
        image = library.image_path(persona)
        if image is None or image.parent != self.folder:
            return
        others = {library.image_path(p) for p in library.personas if p.id != persona.id}
        if image not in others:
            image.unlink(missing_ok=True)

    # ---- character cards ------------------------------------------------------------

    def choose_card(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(
            self.window, "Import a character card", str(Path.home()),
            "Character cards (*.png *.json)")
        if chosen:
            self.import_card_file(Path(chosen))

    def import_card_file(self, path: Path) -> Persona | None:
        """Import a card as a new persona and select it; a bad card gives one message."""
        taken = {p.id for p in self.window.library.personas}
        try:
            persona, written = import_card(path, self.folder, taken)
        except (CardError, PersonaSaveError) as exc:
            self._fail("Character card not imported", f"{path.name}: {exc}")
            return None
        log.info("imported card %s as %s", path.name, written)
        self.reload(select=persona.id)
        return persona

    def choose_export(self, persona: Persona) -> None:
        default = str(Path.home() / f"{persona.id}.card.png")
        chosen, _ = QFileDialog.getSaveFileName(self.window, "Export as character card",
                                                default, "Character card (*.png)")
        if chosen:
            self.export_card(persona, Path(chosen))

    def export_card(self, persona: Persona, target: Path) -> bool:
        image = self.window.library.image_path(persona)
        picture: bytes | None = None
        try:
            if image is not None and image.suffix.lower() == ".png" and image.is_file() \
                    and image.stat().st_size <= 20 * MIB:
                picture = image.read_bytes()
            try:
                blob = export_card_png(persona, picture)
            except CardError:  # a picture that is not a usable PNG: the drawn badge
                blob = export_card_png(persona, None)
            target.write_bytes(blob)
        except OSError as exc:
            self._fail("Card not exported", f"{target}: {exc.strerror or exc}")
            return False
        self.window.add_notice(f"Exported {persona.name} as a character card: {target}")
        return True

    def _fail(self, title: str, message: str) -> None:
        self.last_error = message
        log.warning("%s: %s", title, message)
        self.window.add_notice(f"{title}: {message}")
        if self.interactive:
            warn(self.window, title, message)


def _existing_files(folder: Path) -> list[Path]:
    try:
        return list(folder.glob("*.toml"))
    except OSError:
        return []
