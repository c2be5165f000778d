"""Enrolled voices on disk: one small JSON file per person in ``<data>/voices/``, readable by
its owner alone. A voice print is 256 numbers, no audio: the recordings it was made from are
never stored. Deleting a voice removes its file."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from pathlib import Path

from app.core.voice_gate import VoicePrint
from app.paths import user_data_dir
from app.storage.atomic import write_text_atomically
from app.storage.faults import is_disk_full
from app.storage.private import private_dir
from app.storage.safe_read import UnreadableFileError, UserFileError, load_json

log = logging.getLogger(__name__)

VOICES = "voices"
SCHEMA_VERSION = 1
EMBEDDING_SIZE = 256
MAX_NAME_CHARS = 40
MAX_FILE_BYTES = 64 * 1024


def voices_dir() -> Path:
    return user_data_dir() / VOICES


def _file_name(name: str) -> str:
    """A readable, safe file name that two different names never share."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")[:24] or "voice"
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}.json"


def _parse(data: object) -> VoicePrint:
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise UserFileError("it is not a version 1 voice print")
    name, at, seconds = data.get("name"), data.get("enrolled_at"), data.get("speech_s")
    embedding = data.get("embedding")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
        raise UserFileError("its name is missing or too long")
    numbers = (at, seconds, *(embedding if isinstance(embedding, list) else []))
    if (not isinstance(embedding, list) or len(embedding) != EMBEDDING_SIZE
            or not all(isinstance(x, int | float) and not isinstance(x, bool)
                       and math.isfinite(x) for x in numbers)):
        raise UserFileError(f"it does not hold {EMBEDDING_SIZE} finite numbers")
    assert isinstance(at, int | float) and isinstance(seconds, int | float)
    return VoicePrint(name.strip(), tuple(float(x) for x in embedding), float(at),
                      float(seconds))


def keep_learnt(voice: VoicePrint, store: VoicePrintStore) -> tuple[list[VoicePrint], str | None]:
    """Store a voice learnt from the conversation (``app.core.voice_learning``): the prints
    to use from now on, and a line for the user when it could not be saved (it is used
    until the app closes all the same)."""
    try:
        store.save(voice)
    except (OSError, ValueError) as exc:
        log.warning("learnt voice not saved: %s", exc)
        why = "the disk is full" if is_disk_full(exc) else str(exc)
        kept = [p for p in store.all() if p.name != voice.name]
        return [*kept, voice], (f"Your voice was learnt but could not be saved ({why}): it "
                                "is used until Hanasu closes.")
    return store.all(), None


class VoicePrintStore:
    """The enrolled voices in ``folder`` (the data folder's ``voices/`` by default)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else voices_dir()

    def all(self) -> list[VoicePrint]:
        """Every readable voice print, oldest first; a damaged file is skipped (logged)."""
        prints: list[VoicePrint] = []
        if not self.folder.is_dir():
            return prints
        for path in sorted(self.folder.glob("*.json")):
            try:
                prints.append(_parse(load_json(path, max_bytes=MAX_FILE_BYTES, max_depth=4)))
            except (UserFileError, UnreadableFileError) as exc:
                log.warning("voice print %s skipped: %s", path.name, exc)
        return sorted(prints, key=lambda p: p.enrolled_at)

    def save(self, voice: VoicePrint) -> Path:
        """Store ``voice`` (replacing one of the same name); raises OSError."""
        if len(voice.embedding) != EMBEDDING_SIZE:
            raise ValueError(f"a voice print has {EMBEDDING_SIZE} numbers")
        name = voice.name.strip()
        if not name or len(name) > MAX_NAME_CHARS:
            raise ValueError(f"a name of 1 to {MAX_NAME_CHARS} characters")
        path = private_dir(self.folder) / _file_name(name)
        record = {"schema_version": SCHEMA_VERSION, "name": name,
                  "enrolled_at": voice.enrolled_at, "speech_s": round(voice.speech_s, 2),
                  "embedding": [round(x, 7) for x in voice.embedding]}
        write_text_atomically(path, json.dumps(record) + "\n", owner_only=True)
        return path

    def delete(self, name: str) -> bool:
        """Remove the voice print of ``name`` from disk; False when there was none."""
        path = self.folder / _file_name(name.strip())
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True
