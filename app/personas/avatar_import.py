"""Import a layered avatar from a folder or a .zip: pictures are gathered (a zip is read
defensively: no paths outside it, capped entries and sizes, sizes checked while reading
so a lying header cannot inflate past them), their roles guessed from common PNGtuber
file names, and, once the user has confirmed the mapping, copied under ``avatar/<id>/``
in the persona's folder. A picture that looks like a sprite sheet (a whole grid of the
pack's usual picture size, a strip of square cells, a name saying so) gets a proposed
grid, and its cells roles of their own (a mouth sheet's six cells the lip-sync shapes).

A role's value is a gathered file's name or a sheet's cell (``"sheet:NAME:INDEX"``, the
sheet keyed by NAME in the ``sheets`` passed alongside).
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path, PurePosixPath

from app.core.emotion import Emotion
from app.core.visemes import Viseme
from app.personas.avatar_layers import (
    LAYER_SUFFIXES,
    MAX_LAYER_BYTES,
    MAX_LAYER_FILES,
    MAX_LAYERS_TOTAL_BYTES,
    AvatarFileError,
    AvatarLayers,
    sniff_picture,
)
from app.personas.avatar_sheets import (
    SpriteSheet,
    cell_reference,
    check_grid,
    is_cell,
    parse_cell,
    png_size,
    propose_grid,
)
from app.storage.safe_read import MIB

MAX_ZIP_BYTES = 64 * MIB
MAX_ZIP_ENTRIES = 500
"""Entries of any kind (folders, readme, other files) a zip may list."""
ROLES = ("base", "mouth_closed", "mouth_half", "mouth_open", "eyes_closed")
LIP_ROLES = tuple(f"lips_{v.value}" for v in Viseme)
"""The lip-sync shapes (``[avatar.layers.mouths]``) as roles: lips_closed, lips_a, ..."""
ROLE_NAMES = {"base": "Base", "mouth_closed": "Mouth closed", "mouth_half": "Mouth half open",
              "mouth_open": "Mouth open", "eyes_closed": "Eyes closed (blink)",
              "lips_closed": "Lip-sync closed (m, b, p)"} | {
    f"lips_{v.value}": f"Lip-sync \"{v.value}\"" for v in Viseme if v is not Viseme.CLOSED}
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


def sheet_name(file: str, taken: set[str]) -> str:
    """A sheet name for ``file`` (its stem, letters, digits, '-' and '_'), unique."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", PurePosixPath(file).stem)[:36].strip("_") or "sheet"
    candidate, n = stem, 2
    while candidate in taken:
        candidate, n = f"{stem}-{n}", n + 1
    return candidate


def guess_sheets(staging: Path, names: list[str]) -> dict[str, SpriteSheet]:
    """The gathered pictures that look like sprite sheets, with a proposed grid, by sheet
    name (see ``propose_grid``; only a PNG's size is read, from its header). The frame
    size is the pack's most common picture size (of those as common, the smallest)."""
    sizes: dict[str, tuple[int, int] | None] = {}
    for file in names:
        with (staging / file).open("rb") as stream:
            sizes[file] = png_size(stream.read(24))
    known = [size for size in sizes.values() if size is not None]
    frame = max(known, key=lambda s: (known.count(s), -s[0] * s[1])) if len(known) > 1 \
        else None
    sheets: dict[str, SpriteSheet] = {}
    for file in names:
        grid = propose_grid(file, sizes[file], frame)
        if grid is not None:
            sheets[sheet_name(file, set(sheets))] = SpriteSheet(file=file, columns=grid[0],
                                                                rows=grid[1])
    return sheets


def _sheet_roles(sheet: SpriteSheet) -> list[tuple[str, int]]:
    """(role, cell) for a sheet, from its file name and cell count: a mouth sheet's six
    cells are the lip-sync shapes (closed, a, i, u, e, o), three the closed/half/open
    mouths; a blink sheet's last cell the closed eyes; any other sheet's first cell the
    base, and of two cells the second the open mouth (idle, talking), of four (idle and
    talking by eyes open and closed) the closed eyes and the open mouth."""
    stem, cells = PurePosixPath(sheet.file).stem.lower(), sheet.cells
    if re.search(r"mouth|talk|lip|viseme|speak", stem):
        if cells >= len(LIP_ROLES):
            return [(role, i) for i, role in enumerate(LIP_ROLES)]
        mouths = ("mouth_closed", "mouth_open") if cells == 2 else ROLES[1:4]
        return [(role, i) for i, role in enumerate(mouths[:cells])]
    if re.search(r"blink|eye", stem):
        return [("eyes_closed", cells - 1)]
    guessed = [("base", 0)]
    if cells == 2:
        guessed.append(("mouth_open", 1))
    elif cells >= 4:
        guessed += [("eyes_closed", 1), ("mouth_open", 2)]
    return guessed


def guess_roles(names: list[str], sheets: dict[str, SpriteSheet] | None = None
                ) -> dict[str, str]:
    """Role (``ROLES``, ``LIP_ROLES`` or an emotion name) to file name or sheet cell, from
    the names and the sheets' grids; the base falls back to the first picture no other
    role took, or the first sheet's first cell."""
    sheets = sheets or {}
    sheet_files = {sheet.file for sheet in sheets.values()}
    roles: dict[str, str] = {}
    for name in names:
        if name in sheet_files:
            continue
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
    for name, sheet in sheets.items():
        for role, index in _sheet_roles(sheet):
            roles.setdefault(role, cell_reference(name, index))
    if "base" not in roles:
        taken = set(roles.values())
        spare = [n for n in names if n not in taken and n not in sheet_files]
        if spare or not sheets:
            roles["base"] = (spare or names)[0]
        else:
            roles["base"] = cell_reference(next(iter(sheets)), 0)
    return roles


def build_layers(roles: dict[str, str], sheets: dict[str, SpriteSheet] | None = None,
                 under: str = "") -> AvatarLayers:
    """The layers ``roles`` make, every file named as ``under`` + its gathered name; only
    the sheets a role takes a cell of are kept."""
    sheets = sheets or {}
    values = {r: v if is_cell(v) else f"{under}{v}" for r, v in roles.items()}
    used = {parse_cell(v)[0] for v in values.values() if is_cell(v)}
    return AvatarLayers.model_validate({
        **{r: v for r, v in values.items() if r in ROLES},
        "mouths": {r.removeprefix("lips_"): v for r, v in values.items() if r in LIP_ROLES},
        "expressions": {r: v for r, v in values.items()
                        if r not in ROLES and r not in LIP_ROLES},
        "sheets": {name: sheet.model_copy(update={"file": f"{under}{sheet.file}"})
                   for name, sheet in sheets.items() if name in used}})


def describe(roles: dict[str, str], persona_id: str,
             sheets: dict[str, SpriteSheet] | None = None) -> AvatarLayers:
    """The layers ``roles`` make once installed for ``persona_id`` (relative paths)."""
    return build_layers(roles, sheets, f"avatar/{persona_id}/")


def install(staging: Path, roles: dict[str, str], folder: Path, persona_id: str,
            sheets: dict[str, SpriteSheet] | None = None) -> AvatarLayers:
    """Copy the pictures and sheets ``roles`` uses from ``staging`` into
    ``folder/avatar/<id>/`` and describe them (paths relative to ``folder``)."""
    layers = describe(roles, persona_id, sheets)
    target = folder / "avatar" / persona_id
    target.mkdir(parents=True, exist_ok=True)
    for name in layers.files():
        file = PurePosixPath(name).name
        shutil.copyfile(staging / file, target / file)
    return layers


def regrid(roles: dict[str, str], sheets: dict[str, SpriteSheet], file: str, columns: int,
           rows: int) -> tuple[dict[str, str], dict[str, SpriteSheet]]:
    """``file`` cut into ``columns`` x ``rows`` cells (1 x 1: a single picture again), and
    the roles that used it kept where they still can be: a cell still in the grid stays,
    the whole picture becomes cell 0 and cell 0 the whole picture; others are dropped.
    Raises SheetError for a grid of too many cells."""
    check_grid(file, columns, rows)
    old = next((name for name, sheet in sheets.items() if sheet.file == file), None)
    name = old or sheet_name(file, set(sheets))
    sheets = {n: s for n, s in sheets.items() if n != old}
    if columns * rows > 1:
        sheets[name] = SpriteSheet(file=file, columns=columns, rows=rows)
    kept: dict[str, str] = {}
    for role, value in roles.items():
        if is_cell(value) and parse_cell(value)[0] == old:
            index = parse_cell(value)[1]
            if name not in sheets:
                value = file if index == 0 else ""
            elif index >= sheets[name].cells:
                value = ""
        elif value == file and name in sheets:
            value = cell_reference(name, 0)
        if value:
            kept[role] = value
    return kept, sheets
