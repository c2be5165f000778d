"""Load personas from the bundled assets and the user's own folder.

A malformed file never takes the app down: it is skipped, and the reason (with its
path) lands in ``PersonaLibrary.problems`` so the window can show it; the other personas
still load. Files are read through ``app.storage.safe_read`` (size- and depth-capped
before parsing), so a hostile file cannot crash the parser either.

The user's folder is ``user_data_dir()/personas`` (``~/.local/share/hanasu/personas`` on
Linux). Earlier versions read ``user_config_dir()/personas``; that folder is still read,
with a notice asking to move the files. A user persona with a built-in's id replaces the
built-in, with a notice saying so (copying a built-in file and editing it is the way to
customise one).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from app.paths import assets_dir, user_config_dir, user_data_dir
from app.personas.model import Persona
from app.storage.safe_read import MIB, UserFileError, load_toml

log = logging.getLogger(__name__)

MAX_PERSONA_BYTES = 8 * MIB
"""Large enough that an over-long prompt is reported as such (the model's limit), small
enough to parse in well under a second."""
MAX_PERSONA_DEPTH = 8
"""A persona has two levels of tables; the rest is headroom."""
MAX_PERSONA_FILES = 200
"""Per folder; a folder with thousands of files is not a persona folder."""
PERSONAS = "personas"


def user_personas_dir() -> Path:
    """The one documented folder for the user's own personas."""
    return user_data_dir() / PERSONAS


def legacy_personas_dir() -> Path:
    """Where versions before 0.2 looked (still read, with a notice)."""
    return user_config_dir() / PERSONAS


@dataclass
class PersonaLibrary:
    personas: list[Persona] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Skipped files, one line each with the path and the reason."""
    notices: list[str] = field(default_factory=list)
    """Things the user should know that are not errors (a replaced built-in, a moved folder)."""
    sources: dict[str, Path] = field(default_factory=dict)
    """The file each persona was read from."""
    bundled: set[str] = field(default_factory=set)
    """Ids of personas read from the app's own (read-only) folder."""

    def is_builtin(self, persona_id: str) -> bool:
        return persona_id in self.bundled

    def image_path(self, persona: Persona) -> Path | None:
        """The avatar picture's file, relative to the persona file's folder (None: the
        drawn face). Only a plain file name or a path below that folder is accepted."""
        name = persona.avatar.image
        source = self.sources.get(persona.id)
        if not name or source is None:
            return None
        return resolve_image(source.parent, name)

    def folder(self, persona: Persona) -> Path | None:
        """The folder of the persona's file (its pictures' paths are relative to it)."""
        source = self.sources.get(persona.id)
        return None if source is None else source.parent

    def get(self, persona_id: str) -> Persona:
        for persona in self.personas:
            if persona.id == persona_id:
                return persona
        known = ", ".join(p.id for p in self.personas) or "none"
        raise KeyError(f"unknown persona {persona_id!r} (known: {known})")

    @property
    def default(self) -> Persona:
        return self.personas[0]

    @property
    def messages(self) -> list[str]:
        """Problems then notices: everything the window's notice area should list."""
        return [*self.problems, *self.notices]


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


def resolve_image(folder: Path, name: str) -> Path | None:
    """``folder/name`` when it stays inside ``folder`` and is a picture file name."""
    candidate = Path(name)
    if candidate.is_absolute() or ".." in candidate.parts:
        return None
    if candidate.suffix.lower() not in IMAGE_SUFFIXES:
        return None
    return folder / candidate


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    message = str(first["msg"])
    if message.startswith("Value error, "):
        return message.removeprefix("Value error, ")  # our own messages name the field
    where = ".".join(str(part) for part in first["loc"]) or "file"
    return f"{where}: {message}"


def load_persona_file(path: Path) -> Persona:
    """Parse one persona TOML; raises ValueError with a one-line reason."""
    try:
        data = load_toml(path, max_bytes=MAX_PERSONA_BYTES, max_depth=MAX_PERSONA_DEPTH)
    except UserFileError as exc:
        raise ValueError(f"{path}: {exc}") from exc
    try:
        return Persona.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{path}: {_describe(exc)}") from exc


def _persona_files(folder: Path) -> list[Path]:
    try:
        files = sorted(folder.glob("*.toml"))
    except OSError as exc:
        log.warning("cannot list personas in %s: %s", folder, exc)
        return []
    return files[:MAX_PERSONA_FILES]


def load_personas(*folders: Path) -> PersonaLibrary:
    """Bundled personas first, then each folder's; a later file with the same id wins,
    with a notice (a user file replacing a built-in, or two user files with one id)."""
    library = PersonaLibrary()
    by_id: dict[str, tuple[Persona, Path, bool]] = {}
    bundled = assets_dir() / PERSONAS
    for folder in (bundled, *folders):
        if not folder.is_dir():
            continue
        for path in _persona_files(folder):
            try:
                persona = load_persona_file(path)
            except ValueError as exc:
                log.info("skipping persona: %s", exc)  # callers show library.problems
                library.problems.append(f"Skipped persona file {exc}")
                continue
            earlier = by_id.get(persona.id)
            if earlier is not None:
                earlier_persona, earlier_path, earlier_bundled = earlier
                if "order" not in persona.model_fields_set:  # keep its place in the sidebar
                    persona = persona.model_copy(update={"order": earlier_persona.order})
                if earlier_bundled:
                    notice = (f"Your persona {persona.id!r} ({path}) replaces the built-in "
                              f"persona {persona.id!r}.")
                else:
                    notice = (f"{path} and {earlier_path} both define persona "
                              f"{persona.id!r}; using {path}.")
                log.info("%s", notice)
                library.notices.append(notice)
            by_id[persona.id] = (persona, path, folder == bundled)
    library.personas = sorted((p for p, _, _ in by_id.values()), key=lambda p: (p.order, p.name))
    library.sources = {pid: path for pid, (_, path, _) in by_id.items()}
    library.bundled = {pid for pid, (_, _, bundled) in by_id.items() if bundled}
    if not library.personas:
        raise ValueError("no usable persona found in " + ", ".join(map(str, folders)))
    return library


def load_persona_library() -> PersonaLibrary:
    """The bundled personas plus the user's (the app, ``run`` and ``bench`` all use this)."""
    legacy, current = legacy_personas_dir(), user_personas_dir()
    folders = [current]
    moved = legacy != current and legacy.is_dir() and bool(_persona_files(legacy))
    if moved:
        folders.insert(0, legacy)  # the new folder wins over the old one
    library = load_personas(*folders)
    if moved:
        library.notices.append(
            f"Personas in {legacy} were loaded, but that folder is deprecated: "
            f"move them to {current}."
        )
    return library
