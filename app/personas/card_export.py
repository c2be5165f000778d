"""A persona as a character card: the V2/V3 ``data`` object (the card fields it was
imported with come back unchanged, with Hanasu's voice, avatar and LLM settings under
``data.extensions.hanasu``) and a PNG holding both versions.

Pure: no Qt. A persona without a picture gets a plain portrait drawn in its colours.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from app.personas.card_file import (
    Chunk,
    card_chunk,
    encode_png,
    read_chunks,
    strip_card_chunks,
)
from app.personas.cards import HANASU_EXTENSION, derived_greeting, derived_prompt
from app.personas.model import AvatarStyle, CardOrigin, Persona


def persona_card_data(persona: Persona) -> dict[str, Any]:
    """The V2/V3 ``data`` object for ``persona`` (kept card fields come back)."""
    origin = persona.card or CardOrigin()
    data: dict[str, Any] = json.loads(origin.extra_json)
    description = origin.description or persona.description
    fields = {
        "description": origin.description, "personality": origin.personality,
        "scenario": origin.scenario, "mes_example": origin.mes_example,
        "system_prompt": origin.system_prompt,
    }
    if persona.system_prompt == derived_prompt(persona.name, fields):
        prompt = origin.system_prompt  # unchanged since import: the card's own words
    else:
        prompt = persona.system_prompt
    first_mes = origin.first_mes
    if persona.greeting != derived_greeting(persona.name, first_mes):
        first_mes = persona.greeting
    data.update(
        name=persona.name,
        description=description,
        personality=origin.personality,
        scenario=origin.scenario,
        first_mes=first_mes,
        mes_example=origin.mes_example,
        creator_notes=origin.creator_notes,
        system_prompt=prompt,
    )
    for key, default in (("post_history_instructions", ""), ("alternate_greetings", []),
                         ("tags", []), ("creator", ""), ("character_version", "")):
        data.setdefault(key, default)
    extensions = data.get("extensions")
    extensions = dict(extensions) if isinstance(extensions, dict) else {}
    extensions[HANASU_EXTENSION] = {
        "language": persona.language,
        "languages": list(persona.spoken_languages()),
        "voice": persona.voice.model_dump(mode="json", exclude_none=True),
        "avatar": persona.avatar.model_dump(mode="json", exclude_none=True, exclude={"image"}),
        "llm": persona.llm.model_dump(mode="json", exclude_none=True),
    }
    data["extensions"] = extensions
    return data


def card_json(persona: Persona, version: int) -> dict[str, Any]:
    data = persona_card_data(persona)
    if version == 3:
        data.setdefault("group_only_greetings", [])
        return {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}
    data.pop("group_only_greetings", None)
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}


def export_card_png(persona: Persona, image_png: bytes | None = None) -> bytes:
    """A PNG card of ``persona``: its picture (or a drawn badge in its colours) with a V2
    ``chara`` chunk and a V3 ``ccv3`` chunk."""
    picture = strip_card_chunks(read_chunks(image_png)) if image_png else _badge(persona.avatar)
    cards = [card_chunk("chara", card_json(persona, 2)),
             card_chunk("ccv3", card_json(persona, 3))]
    return encode_png([*picture[:-1], *cards, picture[-1]])


def _badge(style: AvatarStyle, width: int = 256, height: int = 384) -> list[Chunk]:
    """A plain portrait in the persona's colours: background, hair, face, accent band."""

    def rgb(colour: str) -> bytes:
        return bytes.fromhex(colour[1:])

    bg, hair, skin, accent = (rgb(c) for c in (style.background, style.hair, style.skin,
                                                style.accent))
    cx, cy, r = width / 2, height * 0.42, width * 0.3
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            d2 = (x - cx) ** 2 + (y - cy) ** 2
            if y > height * 0.86:
                pixel = accent
            elif d2 <= r * r:
                pixel = skin if y > cy - r * 0.35 else hair
            elif d2 <= (r * 1.12) ** 2 and y < cy + r * 0.2:
                pixel = hair
            else:
                pixel = bg
            rows += pixel
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return [Chunk(b"IHDR", header), Chunk(b"IDAT", zlib.compress(bytes(rows), 9)),
            Chunk(b"IEND", b"")]
