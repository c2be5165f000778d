"""[avatar.layers]: validated names, capped files, a defensive zip import (no Qt here)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from app.core.visemes import Viseme
from app.personas.avatar_import import gather, guess_roles, install
from app.personas.avatar_layers import (
    MAX_LAYER_BYTES,
    MAX_LAYER_FILES,
    AvatarFileError,
    AvatarLayers,
    check_layer_files,
)
from app.personas.loader import load_persona_file
from app.personas.model import Persona
from app.personas.writer import save_persona

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
"""Enough of a PNG for the checks here (the UI decodes real ones)."""


def persona(**layers: object) -> Persona:
    return Persona.model_validate({"id": "p", "name": "P", "system_prompt": "s",
                                   "avatar": {"layers": layers}})


def test_layers_round_trip_through_the_persona_file(tmp_path: Path) -> None:
    p = persona(base="avatar/p/base.png", mouth_open="avatar/p/open.png",
                eyes_closed="avatar/p/blink.png", expressions={"teasing": "avatar/p/smug.png"})
    loaded = load_persona_file(save_persona(p, tmp_path))
    assert loaded == p
    assert loaded.avatar.layers is not None
    assert loaded.avatar.layers.expressions == {"smug": "avatar/p/smug.png"}


@pytest.mark.parametrize(("layers", "words"), [
    ({"base": "../outside.png"}, "inside the persona's folder"),
    ({"base": "/etc/passwd.png"}, "inside the persona's folder"),
    ({"base": "base.exe"}, "not a PNG"),
    ({"base": "b.png", "expressions": {"furious": "f.png"}}, "'furious' is not one of"),
    ({"base": "b.png", "mouths": {"x": "x.png"}}, "'x' is not one of"),
    ({"base": "b.png", "mouths": {"a": "../a.png"}}, "inside the persona's folder"),
])
def test_bad_layer_names_are_one_clear_line(layers: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        persona(**layers)


def test_lip_sync_mouths_round_trip_and_fall_back_to_the_openings(tmp_path: Path) -> None:
    p = persona(base="b.png", mouth_closed="shut.png", mouth_open="open.png",
                mouths={"A": "a.png", "u": "u.png", "closed": "m.png"})
    loaded = load_persona_file(save_persona(p, tmp_path))
    layers = loaded.avatar.layers
    assert layers is not None and layers == p.avatar.layers
    assert layers.mouths == {"a": "a.png", "u": "u.png", "closed": "m.png"}
    assert {"a.png", "u.png", "m.png"} <= set(layers.files())
    assert layers.mouth(0.8, Viseme.A) == "a.png"
    assert layers.mouth(0.8, Viseme.U) == "u.png"
    assert layers.mouth(0.8, Viseme.I) == "open.png"  # no "i" picture: by the opening
    assert layers.mouth(0.05, Viseme.A) == "m.png"  # nearly shut: the closed shape
    assert layers.mouth(0.8) == "open.png"  # no lip-sync (the level alone)
    plain = persona(base="b.png", mouth_closed="shut.png").avatar.layers
    assert plain is not None and plain.mouth(0.05, Viseme.CLOSED) == "shut.png"


def test_oversized_missing_or_fake_pictures_name_the_file(tmp_path: Path) -> None:
    layers = AvatarLayers(base="base.png", mouth_open="open.png")
    (tmp_path / "base.png").write_bytes(PNG)
    with pytest.raises(AvatarFileError, match=re.escape("open.png is missing")):
        check_layer_files(tmp_path, layers)
    (tmp_path / "open.png").write_bytes(b"GIF89a not a png at all")
    with pytest.raises(AvatarFileError, match=re.escape("open.png is not a PNG, JPEG or WebP")):
        check_layer_files(tmp_path, layers)
    (tmp_path / "open.png").write_bytes(PNG + b"\0" * MAX_LAYER_BYTES)
    with pytest.raises(AvatarFileError, match=re.escape("open.png is 4.0 MiB; the limit is 4 MiB")):
        check_layer_files(tmp_path, layers)


def test_names_are_guessed_from_common_pngtuber_files() -> None:
    roles = guess_roles(["idle.png", "talk.png", "mouth_half.png", "blink.png",
                         "happy.png", "Surprised-face.png"])
    assert roles == {"base": "idle.png", "mouth_open": "talk.png",
                     "mouth_half": "mouth_half.png", "eyes_closed": "blink.png",
                     "happy": "happy.png", "surprised": "Surprised-face.png"}
    assert guess_roles(["a.png", "b.png"])["base"] == "a.png"


def _zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def test_a_zip_is_gathered_flat_and_installed(tmp_path: Path) -> None:
    source = _zip(tmp_path / "pack.zip", {"pack/base.png": PNG, "pack/talk.png": PNG,
                                          "readme.txt": b"hi", "__MACOSX/._base.png": PNG})
    staging = tmp_path / "staging"
    staging.mkdir()
    names = gather(source, staging)
    assert sorted(names) == ["base.png", "talk.png"]
    layers = install(staging, guess_roles(names), tmp_path / "personas", "kit")
    assert layers.base == "avatar/kit/base.png"
    assert check_layer_files(tmp_path / "personas", layers)


@pytest.mark.parametrize(("entries", "words"), [
    ({"../evil.png": PNG}, "points outside the archive"),
    ({"/abs.png": PNG}, "points outside the archive"),
    ({f"f{i}.png": PNG for i in range(MAX_LAYER_FILES + 1)}, f"at most {MAX_LAYER_FILES}"),
    ({"big.png": PNG + b"\0" * MAX_LAYER_BYTES}, "big.png is larger than 4 MiB"),
    ({"fake.png": b"<html>not a picture</html>"}, "fake.png is not a PNG"),
    ({"notes.txt": b"hello"}, "holds no PNG"),
])
def test_hostile_zips_are_refused_with_a_clear_line(tmp_path: Path, entries: dict[str, bytes],
                                                    words: str) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(AvatarFileError, match=re.escape(words)):
        gather(_zip(tmp_path / "pack.zip", entries), staging)
    assert not (tmp_path / "evil.png").exists()


def test_not_a_zip_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "pack.zip"
    fake.write_bytes(b"nope")
    with pytest.raises(AvatarFileError, match=re.escape("not a zip archive")):
        gather(fake, tmp_path)
