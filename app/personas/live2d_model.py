"""A Live2D model as a persona's avatar: ``[avatar.live2d] model = "avatar/x/x.model3.json"``
(Cubism 3 and later; a Cubism 2 ``.model.json`` with its ``.moc`` is drawn too).

The model is drawn by the optional ``live2d-py`` package (``app.ui.live2d_view``), whose
native code parses the model's JSON and ``.moc3`` files; a hostile file must never reach it.
So this module, without Qt, checks everything the model names before it is drawn or
imported: the path stays inside the persona's folder, each file the ``.model3.json``
references stays inside the model's own folder, exists, and keeps to the size caps; every
JSON file parses within size and depth caps; the ``.moc3`` and the textures carry their
signatures. A problem is an ``AvatarFileError`` naming the file and the limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from app.personas.avatar_layers import MAX_PATH_CHARS, AvatarFileError
from app.storage.safe_read import MIB, UserFileError, load_json

MODEL_SUFFIX = ".model3.json"
MODEL_SUFFIXES = (MODEL_SUFFIX, ".model.json")
"""Cubism 3+ and Cubism 2 model files (live2d-py 1.0.0 loads both)."""
MAX_MODEL_FILES = 256
"""Files a model's folder may hold (the models we know have under 100)."""
MAX_MODEL_FILE_BYTES = 32 * MIB
"""Any one file: a 4096-pixel texture atlas or a large ``.moc3`` stays under this."""
MAX_MODEL_TOTAL_BYTES = 128 * MIB
MAX_JSON_BYTES = 4 * MIB
"""Each JSON file (a long motion is about 1 MiB)."""
MAX_JSON_DEPTH = 12
"""Cubism's JSON files nest 5 levels at most."""
MAX_TEXTURES = 16
MAX_EXPRESSIONS = 64
MAX_MOTIONS = 128
MODEL_FILE_SUFFIXES = (".json", ".moc3", ".moc", ".mtn", ".png")
"""What an import copies (motion sounds are never played, so they are left out)."""
MOC_MAGIC = b"MOC3"
MOC2_MAGIC = b"moc"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def check_model_name(name: str) -> str:
    """``name`` when it is a relative model path (``.model3.json``, Cubism 2's
    ``.model.json``) that stays inside the folder."""
    path = PurePosixPath(name.replace("\\", "/"))
    if not name.strip() or len(name) > MAX_PATH_CHARS or "\0" in name:
        raise ValueError(f"avatar.live2d.model {name[:40]!r}: expected a file name under "
                         f"{MAX_PATH_CHARS} characters")
    if path.is_absolute() or ".." in path.parts or ":" in name:
        raise ValueError(f"avatar.live2d.model {name!r} must be inside the persona's folder "
                         f"(a relative path without '..')")
    if not is_model_file(path.name):
        raise ValueError(f"avatar.live2d.model {name!r} is not a {MODEL_SUFFIX} file")
    return path.as_posix()


class Live2DAvatar(BaseModel):
    """``[avatar.live2d]``: the model's ``.model3.json``, relative to the persona's file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str

    @field_validator("model")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_model_name(value)


@dataclass(frozen=True)
class Live2DModelInfo:
    """A model that passed the checks: where it is and what it offers."""

    path: Path
    """The ``.model3.json`` file."""
    files: tuple[Path, ...]
    """Every file it references, each checked."""
    expressions: tuple[str, ...]
    """The names of its expressions, as written (matched to feelings by name)."""
    total_bytes: int


def _relative(value: object, label: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_PATH_CHARS:
        raise AvatarFileError(f"{label}: {where} is not a file name")
    if "\0" in value:
        raise AvatarFileError(f"{label}: {where} is not a file name")
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or ":" in value:
        raise AvatarFileError(f"{label}: {where} {value!r} points outside the model's folder")
    return path.as_posix()


def is_model_file(name: str) -> bool:
    return name.lower().endswith(MODEL_SUFFIXES)


@dataclass(frozen=True)
class _Keys:
    """Where a model file names its files: Cubism 3+ under ``FileReferences`` in
    CamelCase, Cubism 2 at the top level in lower case."""

    moc: str
    textures: str
    others: tuple[str, ...]
    expressions: str
    name: str
    file: str
    motions: str


V3_KEYS = _Keys("Moc", "Textures", ("Physics", "Pose", "DisplayInfo", "UserData"),
                "Expressions", "Name", "File", "Motions")
V2_KEYS = _Keys("model", "textures", ("physics", "pose"), "expressions", "name", "file",
                "motions")


def _references(data: dict[str, Any], label: str) -> tuple[list[str], list[str]]:
    """The files the model names (its moc first) and the expressions' names."""
    if label.lower().endswith(MODEL_SUFFIX):
        refs, k = data.get("FileReferences"), V3_KEYS
        if not isinstance(refs, dict):
            raise AvatarFileError(f"{label} has no FileReferences: not a Live2D model")
    else:
        refs, k = data, V2_KEYS
    files = [_relative(refs.get(k.moc), label, k.moc)]
    textures = refs.get(k.textures)
    if not isinstance(textures, list) or not textures or len(textures) > MAX_TEXTURES:
        raise AvatarFileError(f"{label}: Textures must list 1 to {MAX_TEXTURES} pictures")
    files += [_relative(t, label, "a texture") for t in textures]
    for key in k.others:
        if refs.get(key) is not None:
            files.append(_relative(refs[key], label, key))
    names: list[str] = []
    expressions = refs.get(k.expressions) or []
    if not isinstance(expressions, list) or len(expressions) > MAX_EXPRESSIONS:
        raise AvatarFileError(f"{label}: Expressions must list at most {MAX_EXPRESSIONS}")
    for entry in expressions:
        if not isinstance(entry, dict) or not isinstance(entry.get(k.name), str):
            raise AvatarFileError(f"{label}: an expression has no Name")
        names.append(entry[k.name][:MAX_PATH_CHARS])
        files.append(_relative(entry.get(k.file), label, f"expression {entry[k.name]!r}"))
    motions = refs.get(k.motions) or {}
    if not isinstance(motions, dict):
        raise AvatarFileError(f"{label}: Motions is not a table of groups")
    listed = [m for group in motions.values() for m in (group if isinstance(group, list)
                                                        else [None])]
    if len(listed) > MAX_MOTIONS:
        raise AvatarFileError(f"{label} lists {len(listed)} motions; the limit is {MAX_MOTIONS}")
    for motion in listed:
        if not isinstance(motion, dict):
            raise AvatarFileError(f"{label}: a motion is not described by a File")
        files.append(_relative(motion.get(k.file), label, "a motion"))
    return list(dict.fromkeys(files)), names


def _check_file(root: Path, name: str, label: str) -> int:
    """The size of ``root/name`` after checking it is inside ``root``, within the caps and
    (JSON, moc3, PNG) what it claims to be."""
    path = root / name
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            raise AvatarFileError(f"{label}: {name} points outside the model's folder")
        if not path.is_file():
            raise AvatarFileError(f"{label}: {name} is missing")
        size = path.stat().st_size
        if size > MAX_MODEL_FILE_BYTES:
            raise AvatarFileError(f"Live2D file {name} is {size / MIB:.1f} MiB; the limit is "
                                  f"{MAX_MODEL_FILE_BYTES // MIB} MiB per file")
        with path.open("rb") as file:
            head = file.read(8)
    except OSError as exc:
        raise AvatarFileError(f"Live2D file {name} cannot be read: "
                              f"{exc.strerror or exc}") from exc
    lower = name.lower()
    if lower.endswith(".moc3") and not head.startswith(MOC_MAGIC):
        raise AvatarFileError(f"Live2D file {name} is not a .moc3 model")
    if lower.endswith(".moc") and not head.startswith(MOC2_MAGIC):
        raise AvatarFileError(f"Live2D file {name} is not a Cubism 2 .moc model")
    if lower.endswith(".png") and not head.startswith(PNG_MAGIC):
        raise AvatarFileError(f"Live2D texture {name} is not a PNG picture")
    if lower.endswith(".json"):
        _load(path, name)
    return size


def _load(path: Path, name: str) -> Any:
    try:
        return load_json(path, max_bytes=MAX_JSON_BYTES, max_depth=MAX_JSON_DEPTH)
    except UserFileError as exc:
        raise AvatarFileError(f"Live2D file {name} cannot be used: {exc}") from exc


def check_live2d(folder: Path, live2d: Live2DAvatar) -> Live2DModelInfo:
    """Check the model ``live2d`` names under ``folder`` (the persona file's folder) and
    every file it references; raises AvatarFileError with one line naming the problem."""
    path = folder / live2d.model
    label = PurePosixPath(live2d.model).name
    try:
        inside = path.resolve().is_relative_to(folder.resolve())
    except OSError as exc:
        raise AvatarFileError(f"Live2D model {label} cannot be read: {exc}") from exc
    if not inside:
        raise AvatarFileError(f"Live2D model {live2d.model} points outside {folder}")
    if not path.is_file():
        raise AvatarFileError(f"Live2D model {live2d.model} is missing from {folder}")
    data = _load(path, label)
    if not isinstance(data, dict):
        raise AvatarFileError(f"{label} does not hold a JSON object: not a Live2D model")
    names, expressions = _references(data, label)
    moc = ".moc3" if label.lower().endswith(MODEL_SUFFIX) else ".moc"
    if not names[0].lower().endswith(moc):
        raise AvatarFileError(f"{label}: Moc must name a {moc} file")
    root = path.parent
    total = path.stat().st_size
    for name in names:
        total += _check_file(root, name, label)
        if total > MAX_MODEL_TOTAL_BYTES:
            raise AvatarFileError(f"the Live2D model's files pass {MAX_MODEL_TOTAL_BYTES // MIB}"
                                  f" MiB in all at {name}")
    return Live2DModelInfo(path, tuple(root / n for n in names), tuple(expressions), total)
