"""Write a persona as a TOML file, atomically, into the user's persona folder.

``tomli-w`` does the quoting (every string the user types, including quotes, newlines
and backslashes, must come back byte for byte); the text is read back with the loader's
own parser before it replaces anything, so a file we write always loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w

from app.personas.model import Persona
from app.storage.atomic import write_text_atomically
from app.storage.safe_read import parse_toml

PERSONA_SUFFIX = ".toml"


class PersonaSaveError(RuntimeError):
    """The persona could not be written (disk full, read-only folder...): one line."""


def persona_to_toml(persona: Persona) -> str:
    """The persona as TOML (unset optional fields left out: TOML has no null), checked
    to parse back to ``persona``."""
    dumped: dict[str, Any] = persona.model_dump(mode="json", exclude_none=True)
    data = {key: value for key, value in dumped.items() if value != {}}
    if not persona.auto_language:
        data.pop("languages", None)  # the default (just the main language) stays implicit
    # Multi-line strings keep prompts readable, but TOML reads a "\r\n" inside one back as
    # "\n": then every string goes on one line with escapes, which is exact.
    for multiline in (True, False):
        text = tomli_w.dumps(data, multiline_strings=multiline)
        if Persona.model_validate(parse_toml(text)) == persona:
            return text
    raise PersonaSaveError(f"persona {persona.id!r} does not survive being written as TOML")


def persona_path(folder: Path, persona_id: str) -> Path:
    return folder / f"{persona_id}{PERSONA_SUFFIX}"


def save_persona(persona: Persona, folder: Path, path: Path | None = None) -> Path:
    """Write ``persona`` to ``path`` (default ``folder/<id>.toml``) via a temporary file,
    fsync and rename, so a crash leaves the old file or the new one, never half of one."""
    text = persona_to_toml(persona)
    target = path or persona_path(folder, persona.id)
    try:
        write_text_atomically(target, text)
    except OSError as exc:
        raise PersonaSaveError(f"could not save {target}: {exc.strerror or exc}") from exc
    return target


def delete_persona_file(path: Path) -> None:
    """Remove a user persona's file (and nothing else: its picture may be shared)."""
    try:
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise PersonaSaveError(f"could not delete {path}: {exc.strerror or exc}") from exc
