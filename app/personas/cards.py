"""Character Card V2/V3 import and export (the format SillyTavern and friends share).

A card is a PNG whose ``chara`` (V2) or ``ccv3`` (V3) text chunk holds base64 JSON, or
that JSON on its own. Cards come from strangers, so everything here is defensive: the
file size is capped before reading, PNG chunks are walked by hand with a byte budget
(compressed zTXt/iTXt chunks are inflated with a hard output limit, so a decompression
bomb costs at most that much), the picture's dimensions are checked without decoding it,
the JSON goes through ``safe_read.parse_json`` (depth-capped) and every field's type is
checked. Any problem is one ``CardError`` line; nothing is ever evaluated.

Pure: no Qt. The picture is kept as the PNG bytes and drawn by the UI.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import struct
import unicodedata
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

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
from app.storage.safe_read import MIB, UserFileError, parse_json

MAX_CARD_BYTES = 20 * MIB
"""A card is a portrait plus a few kilobytes of text; 20 MiB is generous."""
MAX_TEXT_BYTES = 8 * MIB
"""Budget for all text chunks together, after inflating compressed ones."""
MAX_CHUNKS = 10_000
MAX_IMAGE_SIDE = 8192
"""The picture is drawn later; a 100 000 px wide "portrait" is a decompression bomb."""
MAX_JSON_DEPTH = 64
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CARD_KEYWORDS = ("ccv3", "chara")
"""Preferred first: a V3 card also carries a V2 chunk for older readers."""
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


class CardError(ValueError):
    """A card that cannot be imported: one line saying why."""


@dataclass(frozen=True)
class Card:
    """A parsed card: its JSON (the ``data`` object), its version and its picture."""

    spec: str
    data: dict[str, Any]
    image_png: bytes | None
    """The PNG without its card chunks, or None for a bare JSON card."""


# ---- PNG chunks --------------------------------------------------------------------


@dataclass(frozen=True)
class _Chunk:
    kind: bytes
    body: bytes


def _chunks(png: bytes) -> list[_Chunk]:
    if not png.startswith(PNG_SIGNATURE):
        raise CardError("not a PNG file")
    chunks: list[_Chunk] = []
    pos = len(PNG_SIGNATURE)
    while pos < len(png):
        if len(chunks) >= MAX_CHUNKS:
            raise CardError(f"the PNG has more than {MAX_CHUNKS:,} chunks")
        if pos + 12 > len(png):
            raise CardError("the PNG is cut short")
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind = png[pos + 4 : pos + 8]
        end = pos + 8 + length
        if end + 4 > len(png):
            raise CardError("the PNG is cut short")
        body = png[pos + 8 : end]
        (crc,) = struct.unpack(">I", png[end : end + 4])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise CardError(f"the PNG's {kind.decode('latin-1')!r} chunk is corrupt (bad CRC)")
        chunks.append(_Chunk(kind, body))
        pos = end + 4
        if kind == b"IEND":
            break
    if not chunks or chunks[0].kind != b"IHDR" or len(chunks[0].body) != 13:
        raise CardError("the PNG has no valid header chunk")
    width, height = struct.unpack(">II", chunks[0].body[:8])
    if not (0 < width <= MAX_IMAGE_SIDE and 0 < height <= MAX_IMAGE_SIDE):
        raise CardError(
            f"the picture is {width}x{height} pixels; the limit is {MAX_IMAGE_SIDE} a side"
        )
    if chunks[-1].kind != b"IEND":
        raise CardError("the PNG is cut short (no IEND chunk)")
    return chunks


def _inflate(data: bytes, budget: int) -> bytes:
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, budget)
    except zlib.error as exc:
        raise CardError(f"a compressed text chunk is corrupt: {exc}") from exc
    if inflater.unconsumed_tail:
        raise CardError(f"a compressed text chunk inflates past {MAX_TEXT_BYTES // MIB} MiB")
    return out


def _text_chunk(chunk: _Chunk, budget: int) -> tuple[str, bytes] | None:
    """(keyword, raw text bytes) of a tEXt/zTXt/iTXt chunk; None for other chunks."""
    if chunk.kind not in (b"tEXt", b"zTXt", b"iTXt"):
        return None
    keyword, sep, rest = chunk.body.partition(b"\0")
    if not sep:
        raise CardError("a PNG text chunk has no keyword")
    name = keyword.decode("latin-1").lower()
    if chunk.kind == b"tEXt":
        return name, rest
    if chunk.kind == b"zTXt":
        if not rest or rest[0] != 0:
            raise CardError("a compressed PNG text chunk uses an unknown method")
        return name, _inflate(rest[1:], budget)
    if len(rest) < 2:
        raise CardError("an international PNG text chunk is cut short")
    compressed, method, rest = rest[0], rest[1], rest[2:]
    _language, sep1, rest = rest.partition(b"\0")
    _translated, sep2, text = rest.partition(b"\0")
    if not (sep1 and sep2):
        raise CardError("an international PNG text chunk is cut short")
    if compressed:
        if method != 0:
            raise CardError("a compressed PNG text chunk uses an unknown method")
        text = _inflate(text, budget)
    return name, text


def _card_texts(chunks: Iterable[_Chunk]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    budget = MAX_TEXT_BYTES
    for chunk in chunks:
        parsed = _text_chunk(chunk, budget)
        if parsed is None:
            continue
        name, text = parsed
        budget -= len(text)
        if budget < 0:
            raise CardError(f"the PNG's text chunks hold more than {MAX_TEXT_BYTES // MIB} MiB")
        if name in CARD_KEYWORDS and name not in found:
            found[name] = text
    return found


def _strip_card_chunks(chunks: list[_Chunk]) -> list[_Chunk]:
    kept = []
    for chunk in chunks:
        if chunk.kind in (b"tEXt", b"zTXt", b"iTXt"):
            keyword = chunk.body.partition(b"\0")[0].decode("latin-1").lower()
            if keyword in CARD_KEYWORDS:
                continue
        kept.append(chunk)
    return kept


def _encode_png(chunks: Iterable[_Chunk]) -> bytes:
    out = bytearray(PNG_SIGNATURE)
    for chunk in chunks:
        out += struct.pack(">I", len(chunk.body)) + chunk.kind + chunk.body
        out += struct.pack(">I", zlib.crc32(chunk.kind + chunk.body) & 0xFFFFFFFF)
    return bytes(out)


# ---- reading -----------------------------------------------------------------------


def _decode_json(text: bytes, base64_encoded: bool) -> Any:
    if base64_encoded:
        compact = re.sub(rb"\s+", b"", text)
        compact += b"=" * (-len(compact) % 4)
        try:
            text = base64.b64decode(compact, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise CardError(f"the card's text is not valid base64: {exc}") from exc
    try:
        decoded = text.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CardError("the card's JSON is not UTF-8 text") from exc
    try:
        return parse_json(decoded, max_depth=MAX_JSON_DEPTH)
    except UserFileError as exc:
        raise CardError(f"the card's JSON is invalid: {exc}") from exc


def _card_from_json(value: Any, image_png: bytes | None) -> Card:
    if not isinstance(value, dict):
        raise CardError("the card's JSON is not an object")
    spec = value.get("spec")
    if spec is None:  # V1: the fields at the top level
        return Card("chara_card_v1", value, image_png)
    if not isinstance(spec, str) or spec not in ("chara_card_v2", "chara_card_v3"):
        raise CardError(f"unknown card spec {str(spec)[:40]!r}")
    data = value.get("data")
    if not isinstance(data, dict):
        raise CardError(f"the {spec} card has no 'data' object")
    return Card(spec, data, image_png)


def parse_card(blob: bytes) -> Card:
    """A card from a PNG's bytes or a JSON file's bytes; raises CardError."""
    if len(blob) > MAX_CARD_BYTES:
        raise CardError(f"the card is {len(blob) / MIB:.1f} MiB; the limit is "
                        f"{MAX_CARD_BYTES // MIB} MiB")
    if blob.startswith(PNG_SIGNATURE):
        chunks = _chunks(blob)
        texts = _card_texts(chunks)
        if not texts:
            raise CardError("the PNG holds no character card (no 'chara' or 'ccv3' chunk)")
        image = _encode_png(_strip_card_chunks(chunks))
        errors: list[CardError] = []
        for keyword in CARD_KEYWORDS:
            if keyword in texts:
                try:
                    return _card_from_json(_decode_json(texts[keyword], True), image)
                except CardError as exc:  # a broken V3 chunk: the V2 one may still do
                    errors.append(exc)
        raise errors[0]
    if blob.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return _card_from_json(_decode_json(blob, False), None)
    raise CardError("not a character card (neither a PNG nor JSON)")


def read_card(path: Path) -> Card:
    """Read and parse the card file at ``path`` (size checked before reading)."""
    try:
        size = path.stat().st_size
        if size > MAX_CARD_BYTES:
            raise CardError(f"the card is {size / MIB:.1f} MiB; the limit is "
                            f"{MAX_CARD_BYTES // MIB} MiB")
        with path.open("rb") as handle:
            blob = handle.read(MAX_CARD_BYTES + 1)
    except OSError as exc:
        raise CardError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return parse_card(blob)


# ---- card -> persona ---------------------------------------------------------------


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


def _derived_prompt(name: str, fields: dict[str, str]) -> str:
    """The persona's prompt from the card's fields as written (less control characters
    and bidi overrides, as ``Persona`` keeps it: export compares the two)."""
    resolved = {k: _macros(plain_text(v, multiline=True), name, "the user")
                for k, v in fields.items()}
    composed = compose_prompt(name, resolved)
    prompt = resolved.get("system_prompt", "")
    if not prompt.strip():
        return composed
    return _fit(prompt.replace("{{original}}", composed), MAX_SYSTEM_PROMPT_CHARS)


def _derived_greeting(name: str, first_mes: str) -> str:
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
    prompt = _derived_prompt(name, fields)
    greeting = _derived_greeting(name, fields["first_mes"])
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


# ---- persona -> card ---------------------------------------------------------------


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
    if persona.system_prompt == _derived_prompt(persona.name, fields):
        prompt = origin.system_prompt  # unchanged since import: the card's own words
    else:
        prompt = persona.system_prompt
    first_mes = origin.first_mes
    if persona.greeting != _derived_greeting(persona.name, first_mes):
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


def _text_chunk_for(keyword: str, value: dict[str, Any]) -> _Chunk:
    payload = base64.b64encode(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    return _Chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + payload)


def export_card_png(persona: Persona, image_png: bytes | None = None) -> bytes:
    """A PNG card of ``persona``: its picture (or a drawn badge in its colours) with a V2
    ``chara`` chunk and a V3 ``ccv3`` chunk."""
    chunks = _strip_card_chunks(_chunks(image_png)) if image_png else _badge(persona.avatar)
    cards = [_text_chunk_for("chara", card_json(persona, 2)),
             _text_chunk_for("ccv3", card_json(persona, 3))]
    return _encode_png([*chunks[:-1], *cards, chunks[-1]])


def _badge(style: AvatarStyle, width: int = 256, height: int = 384) -> list[_Chunk]:
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
    return [_Chunk(b"IHDR", header), _Chunk(b"IDAT", zlib.compress(bytes(rows), 9)),
            _Chunk(b"IEND", b"")]
