"""Personas: typed data loaded from TOML files (no Qt, no engines)."""

from app.personas.loader import (
    PersonaLibrary,
    load_persona_file,
    load_persona_library,
    load_personas,
    user_personas_dir,
)
from app.personas.model import Persona

__all__ = [
    "Persona",
    "PersonaLibrary",
    "load_persona_file",
    "load_persona_library",
    "load_personas",
    "user_personas_dir",
]
