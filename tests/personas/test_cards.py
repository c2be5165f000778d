"""Character cards: V2 and V3 PNGs and bare JSON import into personas, personas export back
to cards, and hostile cards give one CardError line (never another exception)."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.personas.card_export import export_card_png
from app.personas.card_file import (
    MAX_CARD_BYTES,
    MAX_TEXT_BYTES,
    CardError,
    parse_card,
    read_card,
)
from app.personas.cards import card_to_persona, import_card
from app.personas.loader import load_personas
from app.personas.model import MAX_SYSTEM_PROMPT_CHARS, LlmSettings, Persona, VoiceChoice

FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def chunk(kind: bytes, body: bytes) -> bytes:
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


def png(*extra: bytes, width: int = 2, height: int = 2) -> bytes:
    """A real 2x2 RGB PNG with ``extra`` chunks before IEND (other sizes: header only)."""
    rows = b"".join(b"\0" + b"\x10\x20\x30" * 2 for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + b"".join(extra) + chunk(b"IEND", b""))


def b64(value: Any) -> bytes:
    return base64.b64encode(json.dumps(value).encode())


def text(keyword: str, value: Any) -> bytes:
    return chunk(b"tEXt", keyword.encode() + b"\0" + b64(value))


V2 = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Seraphina",
        "description": "{{char}} is a forest guardian with healing magic.",
        "personality": "gentle, protective",
        "scenario": "{{user}} wakes up in her glade.",
        "first_mes": "Oh, you're awake, {{user}}! Rest a little longer.",
        "mes_example": "<START>\n{{char}}: Easy now.",
        "system_prompt": "",
        "creator_notes": "A classic test card.",
        "tags": ["fantasy", "healer"],
        "creator": "someone",
        "character_book": {"entries": [{"keys": ["glade"], "content": "A quiet place."}]},
        "extensions": {"depth_prompt": {"depth": 4, "prompt": "stay kind"}},
        "alternate_greetings": ["Hello again."],
    },
}
V3 = {
    "spec": "chara_card_v3",
    "spec_version": "3.0",
    "data": {**V2["data"], "name": "Mira", "system_prompt": "You are {{char}}, a witty bard.",
             "nickname": "Mimi", "group_only_greetings": [], "creation_date": 1700000000,
             "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}]},
}


def test_v2_png_card_maps_every_field() -> None:
    card = parse_card(png(text("chara", V2)))
    persona = card_to_persona(card, "seraphina", "seraphina.png")
    assert persona.name == "Seraphina"
    assert persona.greeting == "Oh, you're awake, friend! Rest a little longer."
    assert persona.description == "A classic test card."
    prompt = persona.system_prompt
    assert prompt.startswith("You are Seraphina.")
    assert "Seraphina is a forest guardian" in prompt
    assert "Personality: gentle, protective" in prompt
    assert "Scenario: the user wakes up in her glade." in prompt
    assert "Seraphina: Easy now." in prompt  # the example dialogue
    assert persona.avatar.image == "seraphina.png"
    assert persona.card is not None and persona.card.spec == "chara_card_v2"
    extra = json.loads(persona.card.extra_json)
    assert extra["character_book"]["entries"][0]["keys"] == ["glade"]
    assert extra["extensions"]["depth_prompt"]["depth"] == 4
    assert extra["tags"] == ["fantasy", "healer"]


def test_v3_chunk_wins_over_v2_and_its_system_prompt_is_used() -> None:
    card = parse_card(png(text("chara", V2), text("ccv3", V3)))
    assert card.spec == "chara_card_v3"
    persona = card_to_persona(card, "mira")
    assert persona.name == "Mira"
    assert persona.system_prompt == "You are Mira, a witty bard."
    assert json.loads(persona.card.extra_json)["nickname"] == "Mimi"  # type: ignore[union-attr]


def test_compressed_itxt_and_ztxt_chunks_are_read() -> None:
    itxt = chunk(b"iTXt", b"ccv3\0\x01\x00\0\0" + zlib.compress(b64(V3)))
    assert parse_card(png(itxt)).data["name"] == "Mira"
    ztxt = chunk(b"zTXt", b"chara\0\x00" + zlib.compress(b64(V2)))
    assert parse_card(png(ztxt)).data["name"] == "Seraphina"


def test_bare_json_card_and_v1_card() -> None:
    assert parse_card(json.dumps(V2).encode()).data["name"] == "Seraphina"
    v1 = {"name": "Old", "description": "d", "first_mes": "hi", "personality": "",
          "scenario": "", "mes_example": ""}
    persona = card_to_persona(parse_card(json.dumps(v1).encode()), "old")
    assert persona.greeting == "hi" and persona.card is not None
    assert persona.card.spec == "chara_card_v1"


@pytest.mark.parametrize("source", [V2, V3])
def test_card_round_trip_through_export(source: dict[str, Any], tmp_path: Path) -> None:
    first = card_to_persona(parse_card(png(text("chara", source))), "x", "x.png")
    exported = export_card_png(first, png())
    again = parse_card(exported)
    assert again.spec == "chara_card_v3"  # both chunks are written; V3 is preferred
    for key in ("name", "description", "personality", "scenario", "first_mes",
                "mes_example", "creator_notes", "system_prompt", "tags", "character_book",
                "alternate_greetings"):
        assert again.data[key] == source["data"][key], key
    assert again.data["extensions"]["depth_prompt"] == source["data"]["extensions"]["depth_prompt"]
    second = card_to_persona(again, "x", "x.png")
    assert second.model_dump(exclude={"card"}) == first.model_dump(exclude={"card"})
    v2_only = parse_card(_only_chunk(exported, b"chara"))
    assert v2_only.spec == "chara_card_v2" and v2_only.data["name"] == source["data"]["name"]


def _only_chunk(blob: bytes, keyword: bytes) -> bytes:
    """The PNG with the other card chunk removed."""
    out, pos = bytearray(blob[:8]), 8
    while pos < len(blob):
        (length,) = struct.unpack(">I", blob[pos:pos + 4])
        part = blob[pos:pos + 12 + length]
        kind, body = part[4:8], part[8:8 + length]
        if not (kind == b"tEXt" and body.split(b"\0")[0] not in (keyword,)):
            out += part
        pos += 12 + length
    return bytes(out)


def test_every_builtin_exports_and_comes_back_the_same() -> None:
    for persona in load_personas().personas:
        back = card_to_persona(parse_card(export_card_png(persona)), persona.id)
        keep = {"order", "card"}
        assert back.model_dump(exclude=keep) == persona.model_dump(exclude=keep), persona.id


def test_voice_and_llm_settings_travel_in_the_card() -> None:
    persona = Persona(id="p", name="P", system_prompt="You are P.",
                      voice=VoiceChoice(kokoro="bf_emma", speed=1.2),
                      llm=LlmSettings(temperature=0.3, reply_sentences=2))
    back = card_to_persona(parse_card(export_card_png(persona)), "p")
    assert back.voice == persona.voice and back.llm == persona.llm


def test_import_copies_the_picture_and_writes_the_persona(tmp_path: Path) -> None:
    source = tmp_path / "Seraphina.png"
    source.write_bytes(png(text("chara", V2)))
    folder = tmp_path / "personas"
    persona, written = import_card(source, folder, taken_ids={"seraphina"})
    assert persona.id == "seraphina-2"
    assert written == folder / "seraphina-2.toml"
    picture = folder / "seraphina-2.png"
    assert picture.read_bytes().startswith(b"\x89PNG")
    assert b"chara" not in picture.read_bytes()  # the card text is not kept twice
    library = load_personas(folder)
    assert library.get("seraphina-2") == persona
    assert library.image_path(persona) == picture


def test_overlong_card_prompt_is_cut_to_the_limit() -> None:
    data = {**V2["data"], "description": "word " * 20_000}
    persona = card_to_persona(parse_card(json.dumps({**V2, "data": data}).encode()), "long")
    assert len(persona.system_prompt) <= MAX_SYSTEM_PROMPT_CHARS


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"GIF89a", "neither a PNG nor JSON"),
        (png(), "no character card"),
        (png(chunk(b"tEXt", b"chara\0!!!not base64!!!")), "not valid base64"),
        (png(chunk(b"tEXt", b"chara\0" + base64.b64encode(b"{nope"))), "JSON is invalid"),
        (png(text("chara", [1, 2])), "not an object"),
        (png(text("chara", {"spec": "chara_card_v9", "data": {}})), "unknown card spec"),
        (png(text("chara", {"spec": "chara_card_v2", "data": "x"})), "no 'data' object"),
        (png(text("chara", {"spec": "chara_card_v2", "data": {"name": 5}})), "should be text"),
        (png(text("chara", {"spec": "chara_card_v2", "data": {"name": " "}})), "no name"),
        (png(text("chara", V2), width=100_000, height=100_000), "limit is 8192"),
        (png(text("chara", V2))[:-20], "cut short"),
        (b"{" + b"[" * 5000, "JSON is invalid"),
        (png(chunk(b"zTXt", b"chara\0\x00" + zlib.compress(b"A" * (MAX_TEXT_BYTES + 10)))),
         "inflates past"),
    ],
)
def test_bad_cards_give_one_clear_error(blob: bytes, message: str) -> None:
    with pytest.raises(CardError, match=message):
        card_to_persona(parse_card(blob), "x")


def test_bad_crc_is_refused() -> None:
    good = bytearray(png(text("chara", V2)))
    good[40] ^= 0xFF  # inside IDAT
    with pytest.raises(CardError, match="corrupt"):
        parse_card(bytes(good))


def test_oversized_file_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    with big.open("wb") as handle:
        handle.truncate(MAX_CARD_BYTES + 1)
    with pytest.raises(CardError, match="limit is 20 MiB"):
        read_card(big)


def _parse_or_card_error(blob: bytes) -> None:
    try:
        card_to_persona(parse_card(blob), "fuzz")
    except CardError as exc:
        assert str(exc) and "\n" not in str(exc)


@FUZZ
@given(st.binary(max_size=2048))
def test_random_bytes_never_crash(blob: bytes) -> None:
    _parse_or_card_error(blob)
    _parse_or_card_error(b"\x89PNG\r\n\x1a\n" + blob)


@FUZZ
@given(st.integers(0, 10_000), st.integers(0, 255))
def test_flipped_byte_in_a_real_card_never_crashes(position: int, value: int) -> None:
    blob = bytearray(png(text("chara", V2), text("ccv3", V3)))
    blob[position % len(blob)] = value
    _parse_or_card_error(bytes(blob))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                max_size=4),
    max_leaves=20,
)
_card_data = st.fixed_dictionaries(
    {}, optional={key: _json for key in ("name", "description", "personality", "scenario",
                                         "first_mes", "mes_example", "system_prompt",
                                         "creator_notes", "extensions")}
)


@FUZZ
@given(st.sampled_from(["chara_card_v2", "chara_card_v3", None, 3]), _card_data,
       st.sampled_from(["chara", "ccv3", "CHARA"]))
def test_cards_with_wrong_types_never_crash(spec: Any, data: dict[str, Any], keyword: str) -> None:
    value = {"spec": spec, "data": data} if spec is not None else data
    _parse_or_card_error(png(text(keyword, value)))
    _parse_or_card_error(json.dumps(value).encode())
