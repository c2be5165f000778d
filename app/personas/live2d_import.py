"""Import a Live2D model from a folder or a .zip: the avatar import hands a source holding
a ``.model3.json`` here instead of gathering its pictures.

The model's folder keeps its layout (the ``.model3.json`` names its files by relative
paths), so its JSON, ``.moc3`` and PNG files are copied as they are, under the same caps
as every other import: a count of entries, a size per file and in all (a zip entry's size
is checked while reading, so a lying header cannot pass it), no path out of the source.
The copy is then checked like a persona's model (``live2d_model.check_live2d``) before
it can be saved under ``avatar/<id>/live2d/`` in the persona's folder.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from app.personas.avatar_import import MAX_ZIP_ENTRIES, entry_name
from app.personas.avatar_layers import AvatarFileError
from app.personas.live2d_model import (
    MAX_MODEL_FILE_BYTES,
    MAX_MODEL_FILES,
    MAX_MODEL_TOTAL_BYTES,
    MODEL_FILE_SUFFIXES,
    MODEL_SUFFIX,
    Live2DAvatar,
    Live2DModelInfo,
    check_live2d,
    is_model_file,
)
from app.storage.safe_read import MIB

MAX_LIVE2D_ZIP_BYTES = MAX_MODEL_TOTAL_BYTES
"""Textures are PNG (already compressed): the archive is about the size of its files."""


def _ignored(name: str) -> bool:
    return any(part.startswith(".") or part == "__MACOSX" for part in PurePosixPath(name).parts)


def _folder_names(source: Path) -> dict[str, Path]:
    """Relative name to file for the regular files under ``source`` (capped, no links)."""
    found: dict[str, Path] = {}
    for count, path in enumerate(sorted(source.rglob("*"))):
        if count >= MAX_ZIP_ENTRIES:
            raise AvatarFileError(f"{source.name} has more than {MAX_ZIP_ENTRIES} files")
        name = path.relative_to(source).as_posix()
        if path.is_file() and not path.is_symlink() and not _ignored(name):
            found[name] = path
    return found


def _zip_entries(source: Path, archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    entries = archive.infolist()
    if len(entries) > MAX_ZIP_ENTRIES:
        raise AvatarFileError(f"{source.name} lists {len(entries)} entries; the limit is "
                              f"{MAX_ZIP_ENTRIES}")
    named = {entry_name(source, e): e for e in entries}  # every entry checked, kept or not
    return {name: e for name, e in named.items() if not e.is_dir() and not _ignored(name)}


def _model_in(source: Path, names: list[str]) -> str:
    models = sorted(n for n in names if is_model_file(n))
    if not models:
        raise AvatarFileError(f"{source.name} holds no {MODEL_SUFFIX} file")
    if len(models) > 1:
        listed = ", ".join(PurePosixPath(m).name for m in models[:3])
        raise AvatarFileError(f"{source.name} holds {len(models)} Live2D models ({listed}); "
                              f"import one model's folder at a time")
    return models[0]


def holds_live2d(source: Path) -> bool:
    """Whether ``source`` (a folder or .zip) holds a ``.model3.json`` (or Cubism 2's
    ``.model.json``): then it is imported
    as a Live2D model. A source that cannot be listed is not one (the picture import
    then says what is wrong with it)."""
    try:
        if source.is_dir():
            names = list(_folder_names(source))
        elif source.suffix.lower() == ".zip" and source.stat().st_size <= MAX_LIVE2D_ZIP_BYTES:
            with zipfile.ZipFile(source) as archive:
                names = list(_zip_entries(source, archive))
        else:
            return False
    except (AvatarFileError, zipfile.BadZipFile, OSError):
        return False
    return any(is_model_file(name) for name in names)


def _kept(model: str, names: list[str]) -> list[str]:
    """The files under the model's own folder that an import copies."""
    base = PurePosixPath(model).parent
    kept = [n for n in names if PurePosixPath(n).is_relative_to(base)
            and n.lower().endswith(MODEL_FILE_SUFFIXES) and ":" not in n]
    if len(kept) > MAX_MODEL_FILES:
        raise AvatarFileError(f"the Live2D model's folder holds {len(kept)} files; the limit "
                              f"is {MAX_MODEL_FILES}")
    return kept


def _write(staging: Path, relative: str, data: bytes, total: int) -> int:
    if len(data) > MAX_MODEL_FILE_BYTES:
        raise AvatarFileError(f"Live2D file {relative} is larger than "
                              f"{MAX_MODEL_FILE_BYTES // MIB} MiB, the limit per file")
    total += len(data)
    if total > MAX_MODEL_TOTAL_BYTES:
        raise AvatarFileError(f"the Live2D model's files pass {MAX_MODEL_TOTAL_BYTES // MIB} "
                              f"MiB in all at {relative}")
    target = staging / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return total


def _read_capped(path: Path) -> bytes:
    with path.open("rb") as file:
        return file.read(MAX_MODEL_FILE_BYTES + 1)


def stage_live2d(source: Path, staging: Path) -> tuple[Live2DAvatar, Live2DModelInfo]:
    """Copy the model in ``source`` (a folder or .zip) into ``staging``, its folder's
    layout kept, and check it; the model's path is relative to ``staging``. Raises
    AvatarFileError naming the file and the limit."""
    total = 0
    if source.is_dir():
        files = _folder_names(source)
        model = _model_in(source, list(files))
        base = PurePosixPath(model).parent
        for name in _kept(model, list(files)):
            relative = PurePosixPath(name).relative_to(base).as_posix()
            total = _write(staging, relative, _read_capped(files[name]), total)
    elif source.suffix.lower() == ".zip":
        if source.stat().st_size > MAX_LIVE2D_ZIP_BYTES:
            raise AvatarFileError(f"{source.name} is larger than "
                                  f"{MAX_LIVE2D_ZIP_BYTES // MIB} MiB")
        try:
            archive = zipfile.ZipFile(source)
        except (zipfile.BadZipFile, OSError) as exc:
            raise AvatarFileError(f"{source.name} is not a zip archive: {exc}") from exc
        with archive:
            entries = _zip_entries(source, archive)
            model = _model_in(source, list(entries))
            base = PurePosixPath(model).parent
            for name in _kept(model, list(entries)):
                relative = PurePosixPath(name).relative_to(base).as_posix()
                try:
                    with archive.open(entries[name]) as stream:
                        data = stream.read(MAX_MODEL_FILE_BYTES + 1)  # a lying header stops
                except (zipfile.BadZipFile, OSError, RuntimeError, ValueError) as exc:
                    raise AvatarFileError(f"{relative} cannot be read from {source.name}: "
                                          f"{exc}") from exc
                total = _write(staging, relative, data, total)
    else:
        raise AvatarFileError(f"{source.name} is neither a folder nor a .zip")
    try:
        live2d = Live2DAvatar(model=PurePosixPath(model).name)
    except ValueError as exc:  # a name no persona file may hold
        raise AvatarFileError(f"the model's file name {PurePosixPath(model).name!r} "
                              "cannot be used in a persona file") from exc
    return live2d, check_live2d(staging, live2d)


def install_live2d(staging: Path, live2d: Live2DAvatar, folder: Path,
                   persona_id: str) -> Live2DAvatar:
    """Copy a staged model into ``folder/avatar/<id>/live2d/`` (replacing an earlier import
    there) and name it relative to ``folder``."""
    avatar = folder / "avatar" / persona_id
    target, fresh = avatar / "live2d", avatar / "live2d.new"
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.copytree(staging, fresh)
    shutil.rmtree(target, ignore_errors=True)
    fresh.rename(target)
    return Live2DAvatar(model=f"avatar/{persona_id}/live2d/{live2d.model}")


class StagedLive2D:
    """A model copied from a folder or zip into a temporary folder (removed with it), until
    the persona is saved."""

    def __init__(self, source: Path) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="hanasu-live2d-")
        self.folder = Path(self._dir.name)
        try:
            self.live2d, self.info = stage_live2d(source, self.folder)
        except (AvatarFileError, OSError) as exc:
            self._dir.cleanup()
            raise AvatarFileError(str(exc)) from exc

    def install(self, folder: Path, persona_id: str) -> Live2DAvatar:
        return install_live2d(self.folder, self.live2d, folder, persona_id)
