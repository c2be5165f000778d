"""A layered-PNG avatar ("PNGtuber"): a base picture, mouth shapes, closed eyes and
per-expression variants, described under ``[avatar.layers]`` in the persona file.
Lip-sync shapes are optional too (``[avatar.layers.mouths]``: ``a``, ``i``, ``u``, ``e``,
``o``, ``closed``); a shape without a picture falls back to the open/half/closed ones.

Any picture may instead be a cell of a sprite sheet (``"sheet:NAME:INDEX"``, the sheet
declared under ``[avatar.layers.sheets.NAME]``: ``app.personas.avatar_sheets``).

Every path is relative to the persona file's folder. Mouth and eye pictures are drawn over
the base at its size (a full frame works as well as a transparent overlay); an expression's
picture replaces the base while that feeling is shown. This module checks names, counts
and sizes without Qt; the UI decodes the pictures (``app.ui.layered_avatar``) and checks
their dimensions there.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.core.emotion import Emotion
from app.core.visemes import Viseme
from app.personas.avatar_sheets import SpriteSheet, check_sheet_name, is_cell, parse_cell
from app.storage.safe_read import MIB

MAX_LAYER_FILES = 32
"""Pictures an imported folder or zip may hold (an avatar names at most 19)."""
MAX_LAYER_BYTES = 4 * MIB
"""Each picture file; a 4096-pixel PNG of flat art is well under this."""
MAX_LAYERS_TOTAL_BYTES = 32 * MIB
MAX_LAYER_SIDE = 4096
"""Width and height in pixels (checked by the UI before decoding)."""
LAYER_SUFFIXES = (".png", ".webp", ".jpg", ".jpeg")
MAX_PATH_CHARS = 200
EMOTION_ALIASES = {"teasing": Emotion.SMUG.value}
"""The editor says "teasing" for smug; both names are accepted."""


class AvatarFileError(ValueError):
    """An avatar picture is missing, too big or not a picture: one line naming it."""


def check_layer_name(name: str) -> str:
    """``name`` when it is a picture path that stays inside the persona's folder."""
    path = Path(name.replace("\\", "/"))
    if not name.strip() or len(name) > MAX_PATH_CHARS:
        raise ValueError(f"avatar layer {name[:40]!r}: expected a file name under "
                         f"{MAX_PATH_CHARS} characters")
    if path.is_absolute() or ".." in path.parts or ":" in name:
        raise ValueError(f"avatar layer {name!r} must be inside the persona's folder "
                         f"(a relative path without '..')")
    if path.suffix.lower() not in LAYER_SUFFIXES:
        raise ValueError(f"avatar layer {name!r} is not a PNG, WebP or JPEG file name")
    return path.as_posix()


def check_picture(value: str) -> str:
    """A layer's value: a picture's file name or a sheet's cell (``"sheet:NAME:INDEX"``)."""
    if is_cell(value):
        parse_cell(value)
        return value
    return check_layer_name(value)


class AvatarLayers(BaseModel):
    """``[avatar.layers]``: ``base`` is required; the rest is optional."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base: str
    mouth_closed: str | None = None
    mouth_half: str | None = None
    mouth_open: str | None = None
    eyes_closed: str | None = None
    expressions: dict[str, str] = Field(default_factory=dict)
    """Emotion name (``happy``, ``sad``, ...) to a picture replacing the base."""
    mouths: dict[str, str] = Field(default_factory=dict)
    """Lip-sync shape (``a``, ``i``, ``u``, ``e``, ``o``, ``closed``) to its mouth picture."""
    sheets: dict[str, SpriteSheet] = Field(default_factory=dict)
    """Sheet name to a sprite sheet whose cells the pictures above may name."""

    @field_validator("base", "mouth_closed", "mouth_half", "mouth_open", "eyes_closed")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        return None if value is None else check_picture(value)

    @field_validator("sheets")
    @classmethod
    def _sheets(cls, value: dict[str, SpriteSheet]) -> dict[str, SpriteSheet]:
        for name, sheet in value.items():
            check_sheet_name(name)
            check_layer_name(sheet.file)
        return value

    @model_validator(mode="after")
    def _cells(self) -> AvatarLayers:
        for value in self.pictures():
            if is_cell(value):
                name, index = parse_cell(value)
                sheet = self.sheets.get(name)
                if sheet is None:
                    raise ValueError(f"avatar layer {value!r}: no [avatar.layers.sheets."
                                     f"{name}] is declared")
                if index >= sheet.cells:
                    raise ValueError(f"avatar layer {value!r}: sheet {name} has "
                                     f"{sheet.columns}x{sheet.rows} = {sheet.cells} cells "
                                     f"(0 to {sheet.cells - 1})")
        return self

    @field_validator("expressions")
    @classmethod
    def _feelings(cls, value: dict[str, str]) -> dict[str, str]:
        known = {e.value for e in Emotion}
        checked: dict[str, str] = {}
        for key, name in value.items():
            emotion = EMOTION_ALIASES.get(key.lower(), key.lower())
            if emotion not in known:
                raise ValueError(f"avatar.layers.expressions: {key!r} is not one of "
                                 f"{', '.join(sorted(known))}")
            checked[emotion] = check_picture(name)
        return checked

    @field_validator("mouths")
    @classmethod
    def _shapes(cls, value: dict[str, str]) -> dict[str, str]:
        known = {v.value for v in Viseme}
        checked: dict[str, str] = {}
        for key, name in value.items():
            if key.lower() not in known:
                raise ValueError(f"avatar.layers.mouths: {key!r} is not one of "
                                 f"{', '.join(sorted(known))}")
            checked[key.lower()] = check_picture(name)
        return checked

    def pictures(self) -> list[str]:
        """Every layer value (file name or sheet cell), once each, base first."""
        names = [self.base, self.mouth_closed, self.mouth_half, self.mouth_open,
                 self.eyes_closed, *self.expressions.values(), *self.mouths.values()]
        return list(dict.fromkeys(n for n in names if n is not None))

    def used_sheets(self) -> dict[str, SpriteSheet]:
        """The sheets some picture takes a cell of, by name."""
        used = {parse_cell(v)[0] for v in self.pictures() if is_cell(v)}
        return {name: sheet for name, sheet in self.sheets.items() if name in used}

    def files(self) -> list[str]:
        """Every file to read, once each: the separate pictures (base first), then the
        sheets some picture uses."""
        plain = [v for v in self.pictures() if not is_cell(v)]
        sheets = [sheet.file for sheet in self.used_sheets().values()]
        return list(dict.fromkeys([*plain, *sheets]))

    def expression(self, emotion: Emotion | None) -> str | None:
        return None if emotion is None else self.expressions.get(emotion.value)

    def mouth(self, opening: float, viseme: Viseme | None = None) -> str | None:
        """The mouth picture for an opening of 0..1 and a lip-sync shape (a missing shape
        falls back to the nearest opening given, and a missing opening to a lip-sync shape
        that opens about as far)."""
        if viseme is not None:  # lip-sync: a nearly shut mouth is the closed shape
            shape = Viseme.CLOSED if opening < 0.12 else viseme
            if shape.value in self.mouths:
                return self.mouths[shape.value]
        shapes: tuple[str, ...] = ("closed",)
        if opening < 0.12:
            picked = self.mouth_closed
        elif opening < 0.45:
            picked = self.mouth_half or self.mouth_open or self.mouth_closed
            shapes = ("i", "e", "u", "a", "o")
        else:
            picked = self.mouth_open or self.mouth_half or self.mouth_closed
            shapes = ("a", "o", "e", "u", "i")
        if picked is None:  # only lip-sync shapes: the one nearest the opening
            picked = next((self.mouths[s] for s in shapes if s in self.mouths), None)
        return picked


def sniff_picture(head: bytes) -> bool:
    """Whether the first bytes are a PNG, JPEG or WebP signature."""
    return (head.startswith(b"\x89PNG\r\n\x1a\n") or head.startswith(b"\xff\xd8\xff")
            or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"))


def check_layer_files(folder: Path, layers: AvatarLayers) -> list[Path]:
    """The pictures' paths under ``folder``, each checked to exist inside it, be a picture
    by its signature and keep to the size caps; raises AvatarFileError naming the file."""
    root = folder.resolve()
    paths: list[Path] = []
    total = 0
    for name in layers.files():
        path = folder / name
        try:
            if not path.resolve().is_relative_to(root):
                raise AvatarFileError(f"avatar picture {name} points outside {folder}")
            if not path.is_file():
                raise AvatarFileError(f"avatar picture {name} is missing from {folder}")
            size = path.stat().st_size
            if size > MAX_LAYER_BYTES:
                raise AvatarFileError(f"avatar picture {name} is {size / MIB:.1f} MiB; the "
                                      f"limit is {MAX_LAYER_BYTES // MIB} MiB per picture")
            total += size
            if total > MAX_LAYERS_TOTAL_BYTES:
                raise AvatarFileError(f"avatar pictures pass {MAX_LAYERS_TOTAL_BYTES // MIB} "
                                      f"MiB in all at {name}")
            with path.open("rb") as file:
                head = file.read(16)
        except OSError as exc:
            raise AvatarFileError(f"avatar picture {name} cannot be read: "
                                  f"{exc.strerror or exc}") from exc
        if not sniff_picture(head):
            raise AvatarFileError(f"avatar picture {name} is not a PNG, JPEG or WebP picture")
        paths.append(path)
    return paths
