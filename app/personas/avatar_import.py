"""Import a layered avatar from a folder or a .zip: pictures are gathered (a zip is read
defensively: no paths outside it, capped entries and sizes, sizes checked while reading
so a lying header cannot inflate past them), their roles guessed from common PNGtuber
file names, and, once the user has confirmed the mapping, copied under ``avatar/<id>/``
in the persona's folder.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path, PurePosixPath

from app.core.emotion import Emotion
from app.personas.avatar_layers import (
    LAYER_SUFFIXES,
    MAX_LAYER_BYTES,
    MAX_LAYER_FILES,
    MAX_LAYERS_TOTAL_BYTES,
    AvatarFileError,
    AvatarLayers,
    sniff_picture,
)
from app.storage.safe_read import MIB

MAX_ZIP_BYTES = 64 * MIB
MAX_ZIP_ENTRIES = 500
"""Entries of any kind (folders, readme, other files) a zip may list."""
ROLES = ("base", "mouth_closed", "mouth_half", "mouth_open", "eyes_closed")
ROLE_NAMES = {"base": "Base", "mouth_closed": "Mouth closed", "mouth_half": "Mouth half open",
              "mouth_open": "Mouth open", "eyes_closed": "Eyes closed (blink)"}
_GUESSES: tuple[tuple[str, str], ...] = (
    ("eyes_closed", r"blink|eyes?[-_ ]?closed|closed[-_ ]?eyes?"),
    ("mouth_open", r"(mouth|m)[-_ ]?open|open[-_ ]?mouth|talk|speak|\bopen\b"),
    ("mouth_half", r"half|mid|(mouth|m)[-_ ]?[ieu]\b"),
    ("mouth_closed", r"(mouth|m)[-_ ]?closed|closed[-_ ]?mouth|quiet|silent|\bclosed\b|mouth"),
    ("base", r"base|idle|body|neutral|default|main"),
)
_FEELINGS = {e.value: e.value for e in Emotion} | {
    "teasing": "smug", "joy": "happy", "smile": "happy", "angry": "angry", "mad": "angry",
    "shock": "surprised", "surprise": "surprised", "blush": "embarrassed", "think": "thinking",
    "cry": "sad"}


def _is_picture_name(name: str) -> bool:
    path = PurePosixPath(name)
    return path.suffix.lower() in LAYER_SUFFIXES and not any(
        part.startswith(".") or part == "__MACOSX" for part in path.parts)


def _unique(name: str, taken: set[str]) -> str:
    stem, suffix = PurePosixPath(name).stem, PurePosixPath(name).suffix.lower()
    stem = re.sub(r"[^\w.-]+", "_", stem).strip("._") or "layer"
    candidate, n = f"{stem}{suffix}", 2
    while candidate.lower() in taken:
        candidate, n = f"{stem}-{n}{suffix}", n + 1
    taken.add(candidate.lower())
    return candidate


def _checked(name: str, data: bytes, total: int) -> int:
    if len(data) > MAX_LAYER_BYTES:
        raise AvatarFileError(f"{name} is larger than {MAX_LAYER_BYTES // MIB} MiB, the limit "
                              f"per avatar picture")
    if total + len(data) > MAX_LAYERS_TOTAL_BYTES:
        raise AvatarFileError(f"the avatar's pictures pass {MAX_LAYERS_TOTAL_BYTES // MIB} MiB "
                              f"in all at {name}")
    if not sniff_picture(data[:16]):
        raise AvatarFileError(f"{name} is not a PNG, JPEG or WebP picture")
    return total + len(data)


def _too_many(count: int, source: Path) -> AvatarFileError:
    return AvatarFileError(f"{source.name} holds {count} pictures; an avatar may have at most "
                           f"{MAX_LAYER_FILES}")


def gather_folder(source: Path, staging: Path) -> list[str]:
    """Copy the pictures in ``source`` (and its subfolders) into ``staging`` under flat,
    unique names; returns those names. Raises AvatarFileError naming the file and limit."""
    found: list[Path] = []
    for count, path in enumerate(sorted(source.rglob("*"))):
        if count >= MAX_ZIP_ENTRIES:
            raise AvatarFileError(f"{source.name} has more than {MAX_ZIP_ENTRIES} files")
        if path.is_file() and not path.is_symlink() \
                and _is_picture_name(path.relative_to(source).as_posix()):
            found.append(path)
    if len(found) > MAX_LAYER_FILES:
        raise _too_many(len(found), source)
    names: list[str] = []
    taken: set[str] = set()
    total = 0
    for path in found:
        if path.stat().st_size > MAX_LAYER_BYTES:
            raise AvatarFileError(f"{path.name} is larger than {MAX_LAYER_BYTES // MIB} MiB, "
                                  f"the limit per avatar picture")
        data = path.read_bytes()
        total = _checked(path.name, data, total)
        name = _unique(path.name, taken)
        (staging / name).write_bytes(data)
        names.append(name)
    return names


def entry_name(source: Path, entry: zipfile.ZipInfo) -> str:
    """The entry's path inside the archive (forward slashes); raises AvatarFileError for
    one pointing outside it, refusing the whole archive."""
    name = entry.filename.replace("\\", "/")
    parts = PurePosixPath(name).parts
    if name.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
        raise AvatarFileError(f"{source.name}: entry {entry.filename!r} points outside "
                              f"the archive; nothing was imported")
    return name


def gather_zip(source: Path, staging: Path) -> list[str]:
    """Like ``gather_folder`` for a .zip, refusing the whole archive when an entry points
    outside it or it passes the caps."""
    if source.stat().st_size > MAX_ZIP_BYTES:
        raise AvatarFileError(f"{source.name} is larger than {MAX_ZIP_BYTES // MIB} MiB")
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise AvatarFileError(f"{source.name} is not a zip archive: {exc}") from exc
    with archive:
        entries = archive.infolist()
        if len(entries) > MAX_ZIP_ENTRIES:
            raise AvatarFileError(f"{source.name} lists {len(entries)} entries; the limit is "
                                  f"{MAX_ZIP_ENTRIES}")
        pictures = []
        for entry in entries:
            name = entry_name(source, entry)
            if not entry.is_dir() and _is_picture_name(name):
                pictures.append(entry)
        if len(pictures) > MAX_LAYER_FILES:
            raise _too_many(len(pictures), source)
        names: list[str] = []
        taken: set[str] = set()
        total = 0
        for entry in pictures:
            label = PurePosixPath(entry.filename).name
            if entry.file_size > MAX_LAYER_BYTES:
                raise AvatarFileError(f"{label} is larger than {MAX_LAYER_BYTES // MIB} MiB, "
                                      f"the limit per avatar picture")
            try:
                with archive.open(entry) as stream:
                    data = stream.read(MAX_LAYER_BYTES + 1)  # a lying header stops here
            except (zipfile.BadZipFile, OSError, RuntimeError, ValueError) as exc:
                raise AvatarFileError(f"{label} cannot be read from {source.name}: "
                                      f"{exc}") from exc
            total = _checked(label, data, total)
            name = _unique(label, taken)
            (staging / name).write_bytes(data)
            names.append(name)
    return names


def gather(source: Path, staging: Path) -> list[str]:
    """A folder or a .zip (by its suffix), into ``staging``."""
    if source.is_dir():
        names = gather_folder(source, staging)
    elif source.suffix.lower() == ".zip":
        names = gather_zip(source, staging)
    else:
        raise AvatarFileError(f"{source.name} is neither a folder nor a .zip")
    if not names:
        raise AvatarFileError(f"{source.name} holds no PNG, WebP or JPEG pictures")
    return names


def guess_roles(names: list[str]) -> dict[str, str]:
    """Role (``ROLES`` or an emotion name) to file name, from the names alone; the base
    falls back to the first picture no other role took."""
    roles: dict[str, str] = {}
    for name in names:
        stem = PurePosixPath(name).stem.lower()
        words = set(re.split(r"[^a-z]+", stem))
        feeling = next((_FEELINGS[w] for w in words if w in _FEELINGS and w != "neutral"), None)
        if feeling is not None and feeling not in roles \
                and not re.search(r"blink|mouth|talk|open|closed", stem):
            roles[feeling] = name
            continue
        for role, pattern in _GUESSES:
            if role not in roles and re.search(pattern, stem):
                roles[role] = name
                break
    if "base" not in roles:
        taken = set(roles.values())
        spare = [n for n in names if n not in taken] or names
        roles["base"] = spare[0]
    return roles


def describe(roles: dict[str, str], persona_id: str) -> AvatarLayers:
    """The layers ``roles`` make once installed for ``persona_id`` (relative paths)."""
    relative = {role: f"avatar/{persona_id}/{name}" for role, name in roles.items()}
    feelings = {r: p for r, p in relative.items() if r not in ROLES}
    plain = {r: p for r, p in relative.items() if r in ROLES}
    return AvatarLayers.model_validate({**plain, "expressions": feelings})


def install(staging: Path, roles: dict[str, str], folder: Path, persona_id: str) -> AvatarLayers:
    """Copy the pictures ``roles`` uses from ``staging`` into ``folder/avatar/<id>/`` and
    describe them (paths relative to ``folder``)."""
    target = folder / "avatar" / persona_id
    target.mkdir(parents=True, exist_ok=True)
    for name in set(roles.values()):
        shutil.copyfile(staging / name, target / name)
    return describe(roles, persona_id)
