"""Load personas from the bundled assets and the user's own folder.

A malformed file never takes the app down: it is reported with its path and the
reason, and the other personas still load.
"""

from __future__ import annotations

import logging
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from app.paths import assets_dir
from app.personas.model import Persona

log = logging.getLogger(__name__)


@dataclass
class PersonaLibrary:
    personas: list[Persona] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def get(self, persona_id: str) -> Persona:
        for persona in self.personas:
            if persona.id == persona_id:
                return persona
        known = ", ".join(p.id for p in self.personas) or "none"
        raise KeyError(f"unknown persona {persona_id!r} (known: {known})")

    @property
    def default(self) -> Persona:
        return self.personas[0]


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "file"
    return f"{where}: {first['msg']}"


def load_persona_file(path: Path) -> Persona:
    """Parse one persona TOML; raises ValueError with a one-line reason."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read ({exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML ({exc})") from exc
    try:
        return Persona.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{path}: {_describe(exc)}") from exc


def load_personas(*folders: Path) -> PersonaLibrary:
    """Bundled personas first, then each folder's; a later file with the same id wins."""
    library = PersonaLibrary()
    by_id: dict[str, Persona] = {}
    for folder in (assets_dir() / "personas", *folders):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                persona = load_persona_file(path)
            except ValueError as exc:
                log.warning("skipping persona: %s", exc)
                library.problems.append(str(exc))
                continue
            by_id[persona.id] = persona
    library.personas = sorted(by_id.values(), key=lambda p: (p.order, p.name))
    if not library.personas:
        raise ValueError("no usable persona found in " + ", ".join(map(str, folders)))
    return library
