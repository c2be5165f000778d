"""The character card file: a PNG whose ``chara`` (V2) or ``ccv3`` (V3) text chunk holds
base64 JSON, or that JSON on its own (the format SillyTavern and friends share).

Cards come from strangers, so everything here is defensive: the file size is capped before
reading, PNG chunks are walked by hand with a byte budget (compressed zTXt/iTXt chunks are
inflated with a hard output limit, so a decompression bomb costs at most that much), the
picture's dimensions are checked without decoding it, and the JSON goes through
``safe_read.parse_json`` (depth-capped). Any problem is one ``CardError`` line; nothing is
ever evaluated. Writing a card's PNG (``encode_png``, ``text_chunk``) lives here too, so
the chunk layout is in one place.

Pure: no Qt. The picture is kept as the PNG bytes and drawn by the UI.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
class Chunk:
    kind: bytes
    body: bytes


def read_chunks(png: bytes) -> list[Chunk]:
    """The chunks of ``png`` up to IEND, each CRC-checked, within the size limits."""
    if not png.startswith(PNG_SIGNATURE):
        raise CardError("not a PNG file")
    chunks: list[Chunk] = []
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
        chunks.append(Chunk(kind, body))
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


def _text_chunk(chunk: Chunk, budget: int) -> tuple[str, bytes] | None:
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


def _card_texts(chunks: Iterable[Chunk]) -> dict[str, bytes]:
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


def strip_card_chunks(chunks: list[Chunk]) -> list[Chunk]:
    """``chunks`` less the card's own text chunks (the picture alone)."""
    kept = []
    for chunk in chunks:
        if chunk.kind in (b"tEXt", b"zTXt", b"iTXt"):
            keyword = chunk.body.partition(b"\0")[0].decode("latin-1").lower()
            if keyword in CARD_KEYWORDS:
                continue
        kept.append(chunk)
    return kept


def encode_png(chunks: Iterable[Chunk]) -> bytes:
    """A PNG file of ``chunks``, each with its CRC."""
    out = bytearray(PNG_SIGNATURE)
    for chunk in chunks:
        out += struct.pack(">I", len(chunk.body)) + chunk.kind + chunk.body
        out += struct.pack(">I", zlib.crc32(chunk.kind + chunk.body) & 0xFFFFFFFF)
    return bytes(out)


def card_chunk(keyword: str, value: dict[str, Any]) -> Chunk:
    """A ``tEXt`` chunk holding ``value`` as base64 JSON under ``keyword``."""
    payload = base64.b64encode(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    return Chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + payload)


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
        found = read_chunks(blob)
        texts = _card_texts(found)
        if not texts:
            raise CardError("the PNG holds no character card (no 'chara' or 'ccv3' chunk)")
        image = encode_png(strip_card_chunks(found))
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

