"""[avatar.live2d]: a checked model path, capped and parsed model files, a defensive
folder/zip import (no Qt, no live2d-py: the checks run before the native code sees a file)."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.personas.avatar_layers import AvatarFileError
from app.personas.live2d_import import holds_live2d, install_live2d, stage_live2d
from app.personas.live2d_model import (
    MAX_JSON_BYTES,
    MAX_MODEL_FILE_BYTES,
    MAX_MOTIONS,
    Live2DAvatar,
    check_live2d,
)
from app.personas.loader import load_persona_file
from app.personas.model import Persona
from app.personas.writer import save_persona

MOC = b"MOC3" + b"\0" * 60
"""Enough of a .moc3 for the checks here (only live2d-py reads the rest)."""
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64


def model_json(**changes: object) -> dict[str, object]:
    refs: dict[str, object] = {
        "Moc": "hana.moc3", "Textures": ["hana.2048/texture_00.png"],
        "Physics": "hana.physics3.json",
        "Expressions": [{"Name": "happy", "File": "exp/happy.exp3.json"},
                        {"Name": "Sad", "File": "exp/sad.exp3.json"}],
        "Motions": {"Idle": [{"File": "motion/idle.motion3.json", "Sound": "voice.wav"}]},
    }
    refs.update(changes)
    return {"Version": 3, "FileReferences": refs,
            "Groups": [{"Target": "Parameter", "Name": "LipSync", "Ids": ["ParamMouthOpenY"]}]}


def write_model(folder: Path, data: dict[str, object] | None = None) -> Path:
    """A model's folder with every file its .model3.json names (contents faked)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hana.model3.json").write_text(json.dumps(data or model_json()))
    (folder / "hana.moc3").write_bytes(MOC)
    (folder / "hana.2048").mkdir(exist_ok=True)
    (folder / "hana.2048" / "texture_00.png").write_bytes(PNG)
    (folder / "hana.physics3.json").write_text('{"Version": 3}')
    (folder / "exp").mkdir(exist_ok=True)
    for name in ("happy", "sad"):
        (folder / "exp" / f"{name}.exp3.json").write_text('{"Type": "Live2D Expression"}')
    (folder / "motion").mkdir(exist_ok=True)
    (folder / "motion" / "idle.motion3.json").write_text('{"Version": 3, "Curves": []}')
    return folder / "hana.model3.json"


def persona(model: str) -> Persona:
    return Persona.model_validate({"id": "p", "name": "P", "system_prompt": "s",
                                   "avatar": {"live2d": {"model": model}}})


def test_live2d_round_trips_through_the_persona_file(tmp_path: Path) -> None:
    p = persona("avatar/p/live2d/hana.model3.json")
    loaded = load_persona_file(save_persona(p, tmp_path))
    assert loaded == p
    assert loaded.avatar.live2d == Live2DAvatar(model="avatar/p/live2d/hana.model3.json")


@pytest.mark.parametrize(("model", "words"), [
    ("../other/hana.model3.json", "inside the persona's folder"),
    ("/home/x/hana.model3.json", "inside the persona's folder"),
    ("C:hana.model3.json", "inside the persona's folder"),
    ("hana.json", "is not a .model3.json file"),
    ("", "expected a file name"),
])
def test_bad_model_paths_are_one_clear_line(model: str, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        persona(model)


def test_a_whole_model_passes_and_lists_its_expressions(tmp_path: Path) -> None:
    write_model(tmp_path / "m")
    info = check_live2d(tmp_path, Live2DAvatar(model="m/hana.model3.json"))
    assert info.expressions == ("happy", "Sad")
    assert info.files[0] == tmp_path / "m" / "hana.moc3"
    assert len(info.files) == 6  # the sound a motion names is not needed (never played)


@pytest.mark.parametrize(("change", "words"), [
    ({"Moc": "../../secret.moc3"}, "points outside the model's folder"),
    ({"Textures": ["/etc/passwd"]}, "points outside the model's folder"),
    ({"Moc": "missing.moc3"}, "missing.moc3 is missing"),
    ({"Moc": "hana.physics3.json"}, "Moc must name a .moc3 file"),
    ({"Textures": []}, "Textures must list 1 to"),
    ({"Motions": {"Idle": [{"File": "motion/idle.motion3.json"}] * (MAX_MOTIONS + 1)}},
     "motions; the limit is"),
    ({"Expressions": [{"File": "exp/happy.exp3.json"}]}, "an expression has no Name"),
])
def test_a_hostile_model_json_is_refused_before_live2d_reads_it(
        tmp_path: Path, change: dict[str, object], words: str) -> None:
    write_model(tmp_path, model_json(**change))
    with pytest.raises(AvatarFileError, match=re.escape(words)):
        check_live2d(tmp_path, Live2DAvatar(model="hana.model3.json"))


def test_fake_moc_texture_and_oversized_or_deep_json_name_the_file(tmp_path: Path) -> None:
    write_model(tmp_path)
    live2d = Live2DAvatar(model="hana.model3.json")
    (tmp_path / "hana.moc3").write_bytes(b"PK\3\4 not a model")
    with pytest.raises(AvatarFileError, match=re.escape("hana.moc3 is not a .moc3 model")):
        check_live2d(tmp_path, live2d)
    (tmp_path / "hana.moc3").write_bytes(MOC)
    (tmp_path / "hana.2048" / "texture_00.png").write_bytes(b"GIF89a")
    with pytest.raises(AvatarFileError, match=re.escape("texture_00.png is not a PNG")):
        check_live2d(tmp_path, live2d)
    (tmp_path / "hana.2048" / "texture_00.png").write_bytes(PNG)
    (tmp_path / "exp" / "sad.exp3.json").write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(AvatarFileError, match=r"sad\.exp3\.json cannot be used: .*nested"):
        check_live2d(tmp_path, live2d)
    (tmp_path / "exp" / "sad.exp3.json").write_text('{"a": "' + "x" * MAX_JSON_BYTES + '"}')
    with pytest.raises(AvatarFileError, match=r"sad\.exp3\.json cannot be used: .*larger"):
        check_live2d(tmp_path, live2d)
    (tmp_path / "exp" / "sad.exp3.json").write_text("{}")
    (tmp_path / "hana.moc3").write_bytes(MOC + b"\0" * MAX_MODEL_FILE_BYTES)
    with pytest.raises(AvatarFileError, match=re.escape("MiB; the limit is 32 MiB per file")):
        check_live2d(tmp_path, live2d)


def test_an_oversized_model_json_is_refused(tmp_path: Path) -> None:
    write_model(tmp_path)
    (tmp_path / "hana.model3.json").write_text(" " * (MAX_JSON_BYTES + 1) + "{}")
    with pytest.raises(AvatarFileError, match=r"hana\.model3\.json cannot be used: .*larger"):
        check_live2d(tmp_path, Live2DAvatar(model="hana.model3.json"))


def test_a_model_symlinked_out_of_the_persona_folder_is_refused(tmp_path: Path) -> None:
    outside = write_model(tmp_path / "elsewhere")
    (tmp_path / "persona").mkdir()
    (tmp_path / "persona" / "hana.model3.json").symlink_to(outside)
    with pytest.raises(AvatarFileError, match="points outside"):
        check_live2d(tmp_path / "persona", Live2DAvatar(model="hana.model3.json"))


# ---- import ----------------------------------------------------------------------------


def zip_folder(folder: Path, target: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return target


def test_a_model_folder_is_imported_with_its_layout_and_installed(tmp_path: Path) -> None:
    source = tmp_path / "download"
    write_model(source / "Hana")
    (source / "Hana" / "readme.txt").write_text("not copied")
    (source / "Hana" / "voice.wav").write_bytes(b"RIFF")
    (source / "other.png").write_bytes(PNG)  # beside the model's folder: not copied
    assert holds_live2d(source)
    staging = tmp_path / "staging"
    staging.mkdir()
    live2d, info = stage_live2d(source, staging)
    assert live2d.model == "hana.model3.json"
    assert info.expressions == ("happy", "Sad")
    copied = sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file())
    assert copied == ["exp/happy.exp3.json", "exp/sad.exp3.json", "hana.2048/texture_00.png",
                      "hana.moc3", "hana.model3.json", "hana.physics3.json",
                      "motion/idle.motion3.json"]
    personas = tmp_path / "personas"
    installed = install_live2d(staging, live2d, personas, "hana")
    assert installed.model == "avatar/hana/live2d/hana.model3.json"
    assert check_live2d(personas, installed).expressions == ("happy", "Sad")
    again = install_live2d(staging, live2d, personas, "hana")  # a second import replaces it
    assert again == installed
    assert not (personas / "avatar" / "hana" / "live2d.new").exists()


def test_a_model_zip_is_imported(tmp_path: Path) -> None:
    archive = zip_folder(write_model(tmp_path / "m").parent, tmp_path / "hana.zip", "Hana/")
    assert holds_live2d(archive)
    staging = tmp_path / "staging"
    staging.mkdir()
    live2d, _ = stage_live2d(archive, staging)
    assert (staging / live2d.model).is_file()
    assert (staging / "hana.2048" / "texture_00.png").read_bytes() == PNG


def test_pictures_alone_are_not_a_live2d_model(tmp_path: Path) -> None:
    (tmp_path / "base.png").write_bytes(PNG)
    assert not holds_live2d(tmp_path)
    assert not holds_live2d(tmp_path / "nothing.zip")


def test_a_zip_escaping_its_folder_is_refused_whole(tmp_path: Path) -> None:
    archive = zip_folder(write_model(tmp_path / "m").parent, tmp_path / "evil.zip")
    with zipfile.ZipFile(archive, "a") as z:
        z.writestr("../../.bashrc", "rm -rf ~")
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(AvatarFileError, match="points outside the archive; nothing was imported"):
        stage_live2d(archive, staging)
    assert not any(staging.iterdir())
    assert not (tmp_path.parent / ".bashrc").exists()


def test_a_zip_entry_lying_about_its_size_stops_at_the_cap(tmp_path: Path) -> None:
    archive = zip_folder(write_model(tmp_path / "m").parent, tmp_path / "bomb.zip")
    with zipfile.ZipFile(archive, "a", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("big.moc3", b"\0" * (MAX_MODEL_FILE_BYTES + 10))
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(AvatarFileError, match=re.escape("big.moc3 is larger than 32 MiB")):
        stage_live2d(archive, staging)


def test_two_models_in_one_source_are_refused(tmp_path: Path) -> None:
    write_model(tmp_path / "a")
    write_model(tmp_path / "b")
    with pytest.raises(AvatarFileError, match="holds 2 Live2D models"):
        stage_live2d(tmp_path, tmp_path / "staging")


def test_a_broken_model_is_refused_at_import(tmp_path: Path) -> None:
    write_model(tmp_path / "m", model_json(Moc="gone.moc3"))
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(AvatarFileError, match=re.escape("gone.moc3 is missing")):
        stage_live2d(tmp_path / "m", staging)


# ---- fuzzing: whatever a model file holds, the check answers with one line -----------------

_leaf = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
         | st.text(max_size=12) | st.sampled_from(["hana.moc3", "../x.moc3", "a\0b", "C:x",
                                                   "hana.2048/texture_00.png", "/etc/x"]))
_json = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.sampled_from(["Name", "File", "Idle", "x"]) | st.text(
                         max_size=6), inner, max_size=4), max_leaves=16)
_refs = st.fixed_dictionaries({}, optional={
    key: _json for key in ("Moc", "Textures", "Physics", "Pose", "Expressions", "Motions")})


@given(data=_json | st.fixed_dictionaries({"FileReferences": _refs}))
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_model_json_is_a_model_or_one_clear_line(tmp_path: Path, data: object) -> None:
    write_model(tmp_path)
    (tmp_path / "hana.model3.json").write_text(json.dumps(data))
    try:
        check_live2d(tmp_path, Live2DAvatar(model="hana.model3.json"))
    except AvatarFileError as exc:
        assert "\n" not in str(exc) and str(exc)


@given(raw=st.binary(max_size=200))
@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_bytes_as_a_model_json_are_one_clear_line(tmp_path: Path, raw: bytes) -> None:
    write_model(tmp_path)
    (tmp_path / "hana.model3.json").write_bytes(raw)
    with pytest.raises(AvatarFileError):
        check_live2d(tmp_path, Live2DAvatar(model="hana.model3.json"))


def test_a_cubism2_model_is_checked_the_same_way(tmp_path: Path) -> None:
    """Cubism 2's ``.model.json`` (lower-case keys, a ``.moc``) passes the same checks."""
    (tmp_path / "moc").mkdir()
    (tmp_path / "moc" / "hana.moc").write_bytes(b"moc\x09" + b"\0" * 60)
    (tmp_path / "t.png").write_bytes(PNG)
    (tmp_path / "exp.json").write_text("{}")
    data = {"model": "moc/hana.moc", "textures": ["t.png"],
            "expressions": [{"name": "happy", "file": "exp.json"}]}
    (tmp_path / "hana.model.json").write_text(json.dumps(data))
    info = check_live2d(tmp_path, Live2DAvatar(model="hana.model.json"))
    assert info.expressions == ("happy",) and info.files[0].name == "hana.moc"
    (tmp_path / "moc" / "hana.moc").write_bytes(b"MOC3" + b"\0" * 60)
    with pytest.raises(AvatarFileError, match=re.escape("hana.moc is not a Cubism 2 .moc model")):
        check_live2d(tmp_path, Live2DAvatar(model="hana.model.json"))
    data["model"] = "../x.moc"
    (tmp_path / "hana.model.json").write_text(json.dumps(data))
    with pytest.raises(AvatarFileError, match="points outside the model's folder"):
        check_live2d(tmp_path, Live2DAvatar(model="hana.model.json"))
