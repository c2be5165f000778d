"""A character card as a persona: the card's fields mapped onto a ``Persona`` (its prompt
composed from them, SillyTavern's ``{{char}}``/``{{user}}`` macros resolved, control
characters and bidi overrides dropped), and the import of a card file into the user's
persona folder. Reading the file is ``card_file``; the way back is ``card_export``.

Every field's type is checked; a card that cannot be used is one ``CardError`` line.
Pure: no Qt.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.personas.card_file import Card, CardError, read_card
from app.personas.model import (
    MAX_GREETING_CHARS,
    MAX_SYSTEM_PROMPT_CHARS,
    AvatarStyle,
    CardOrigin,
    LlmSettings,
    Persona,
    VoiceChoice,
    check_languages,
)
from app.personas.text import plain_text

HANASU_EXTENSION = "hanasu"
"""``data.extensions.hanasu``: the voice, avatar colours and LLM settings, so a card
exported here comes back as the same persona."""
_KNOWN_FIELDS = (
    "name", "description", "personality", "scenario", "first_mes", "mes_example",
    "system_prompt", "creator_notes",
)
_DEFAULT_PALETTES = (
    ("#f2c9a0", "#3b2a20", "#ff7aa8", "#2a1f33"),
    ("#d9a57c", "#1b1b1b", "#4fc3a1", "#16282a"),
    ("#e8b990", "#7a4a2a", "#f2b134", "#10223d"),
    ("#f6d2b4", "#c8553d", "#9b7bff", "#1f1b33"),
    ("#c68a5e", "#2b2b3a", "#5ec8f2", "#14222e"),
)


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise CardError(f"the card's {key!r} should be text, not {type(value).__name__}")
    return value


def _macros(text: str, name: str, user: str) -> str:
    """SillyTavern's two common macros; everything else is left as written."""
    text = re.sub(r"\{\{\s*char\s*\}\}|<BOT>", name, text, flags=re.IGNORECASE)
    return re.sub(r"\{\{\s*user\s*\}\}|<USER>", user, text, flags=re.IGNORECASE)


def derived_prompt(name: str, fields: dict[str, str]) -> str:
    """The persona's prompt from the card's fields as written (less control characters
    and bidi overrides, as ``Persona`` keeps it: export compares the two)."""
    resolved = {k: _macros(plain_text(v, multiline=True), name, "the user")
                for k, v in fields.items()}
    composed = compose_prompt(name, resolved)
    prompt = resolved.get("system_prompt", "")
    if not prompt.strip():
        return composed
    return _fit(prompt.replace("{{original}}", composed), MAX_SYSTEM_PROMPT_CHARS)


def derived_greeting(name: str, first_mes: str) -> str:
    return _fit(_macros(plain_text(first_mes, multiline=True), name, "friend"),
                MAX_GREETING_CHARS)


def compose_prompt(name: str, fields: dict[str, str]) -> str:
    """A system prompt from a card without one: who, personality, scenario, then example
    dialogue while it fits the prompt limit."""
    parts = [f"You are {name}."]
    if fields.get("description"):
        parts.append(fields["description"].strip())
    if fields.get("personality"):
        parts.append(f"Personality: {fields['personality'].strip()}")
    if fields.get("scenario"):
        parts.append(f"Scenario: {fields['scenario'].strip()}")
    if fields.get("mes_example"):
        parts.append(f"Examples of how {name} talks:\n{fields['mes_example'].strip()}")
    return _fit("\n\n".join(parts), MAX_SYSTEM_PROMPT_CHARS)


def _fit(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a sentence or word end."""
    if len(text) <= limit:
        return text
    cut = text.strip()[: limit - 1]
    for stop in (". ", "\n", " "):
        at = cut.rfind(stop)
        if at > limit // 2:
            return cut[: at + 1].rstrip() + "…"
    return cut + "…"


def slug(name: str, fallback: str = "card") -> str:
    """A persona id from a name: lowercase ASCII letters, digits and dashes."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:32].strip("-") or fallback


def unique_id(base: str, taken: Iterable[str]) -> str:
    used = set(taken)
    if base not in used:
        return base
    n = 2
    while f"{base}-{n}" in used:
        n += 1
    return f"{base}-{n}"


def _palette(name: str) -> AvatarStyle:
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    skin, hair, accent, background = _DEFAULT_PALETTES[digest[0] % len(_DEFAULT_PALETTES)]
    return AvatarStyle(skin=skin, hair=hair, accent=accent, background=background)


def _hanasu_extension(data: dict[str, Any]) -> dict[str, Any]:
    extensions = data.get("extensions")
    if not isinstance(extensions, dict):
        return {}
    ours = extensions.get(HANASU_EXTENSION)
    return ours if isinstance(ours, dict) else {}


def card_to_persona(card: Card, persona_id: str, image: str | None = None) -> Persona:
    """The persona a card describes; unknown card fields are kept in ``persona.card``."""
    data = card.data
    fields = {key: _text(data, key) for key in _KNOWN_FIELDS}
    name = plain_text(fields["name"])[:40].strip()  # no terminal escapes, no bidi overrides
    if not name:
        raise CardError("the card has no name")
    prompt = derived_prompt(name, fields)
    greeting = derived_greeting(name, fields["first_mes"])
    summary = _macros(fields["creator_notes"] or fields["description"], name, "the user")
    extra = {k: v for k, v in data.items() if k not in _KNOWN_FIELDS}
    ours = _hanasu_extension(data)
    language = _extension_value(ours, "language", str, "en")
    if ours:  # written again from the persona on export
        extensions = {k: v for k, v in extra["extensions"].items() if k != HANASU_EXTENSION}
        extra["extensions"] = extensions
    try:
        extra_json = json.dumps(extra, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise CardError(f"the card holds a value JSON cannot keep: {exc}") from exc
    try:
        origin = CardOrigin(
            spec=card.spec,
            description=fields["description"],
            first_mes=fields["first_mes"],
            system_prompt=fields["system_prompt"],
            personality=fields["personality"],
            scenario=fields["scenario"],
            mes_example=fields["mes_example"],
            creator_notes=fields["creator_notes"],
            extra_json=extra_json,
        )
        return Persona(
            id=persona_id,
            name=name,
            description=_fit(plain_text(summary), 120),
            system_prompt=prompt,
            greeting=greeting,
            language=language,
            languages=_extension_languages(ours, language),
            voice=_extension_model(ours, "voice", VoiceChoice, VoiceChoice()),
            avatar=_extension_model(ours, "avatar", AvatarStyle, _palette(name)).model_copy(
                update={"image": image}
            ),
            llm=_extension_model(ours, "llm", LlmSettings, LlmSettings()),
            card=origin,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CardError(f"the card's {where or 'data'} is not usable: {first['msg']}") from exc


def _extension_value(ours: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    value = ours.get(key)
    return value if isinstance(value, kind) and value else default


def _extension_languages(ours: dict[str, Any], language: str) -> tuple[str, ...]:
    """The card's language list when it is usable with its language, else just that one
    (a card is imported even when a later version wrote a list this one cannot use)."""
    value = ours.get("languages")
    if not isinstance(value, list):
        return ()
    try:
        return tuple(check_languages(language, value))
    except ValueError:
        return ()


def _extension_model(ours: dict[str, Any], key: str, model: type[Any], default: Any) -> Any:
    """A Hanasu setting carried in the card, or the default when absent or unusable."""
    value = ours.get(key)
    if not isinstance(value, dict):
        return default
    try:
        return model.model_validate(value)
    except ValidationError:
        return default


def import_card(path: Path, folder: Path, taken_ids: Iterable[str]) -> tuple[Persona, Path]:
    """Import the card at ``path`` as a new user persona in ``folder``: its picture is
    copied there as ``<id>.png`` and the persona written as ``<id>.toml``. Returns the
    persona and its file; raises CardError (or PersonaSaveError for a failed write)."""
    from app.personas.writer import persona_path, save_persona

    card = read_card(path)
    name = plain_text(_text(card.data, "name"))
    taken = set(taken_ids)
    persona_id = unique_id(slug(name), taken)
    while persona_path(folder, persona_id).exists():
        taken.add(persona_id)
        persona_id = unique_id(slug(name), taken)
    image_name = f"{persona_id}.png" if card.image_png else None
    persona = card_to_persona(card, persona_id, image_name)
    image_path = folder / image_name if image_name else None
    try:
        if image_path is not None and card.image_png is not None:
            folder.mkdir(parents=True, exist_ok=True)
            image_path.write_bytes(card.image_png)
        written = save_persona(persona, folder)
    except OSError as exc:
        raise CardError(f"cannot write into {folder}: {exc.strerror or exc}") from exc
    except Exception:
        if image_path is not None:
            image_path.unlink(missing_ok=True)
        raise
    return persona, written

