"""Model metadata files the app parses itself (SHA256SUMS, the stamps, the manifest, a Piper
voice config) are capped before parsing: hostile ones give the app's own errors."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.adapters.errors import EngineLoadError
from app.models.catalog import load_catalog
from app.models.errors import ModelError
from app.models.hashing import SUMS_FILE, read_stamps, read_sums

FUZZ = settings(max_examples=100, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("text", [
    "a = " + "[" * 5_000 + "]" * 5_000,
    "[llm" + ".x" * 5_000 + "]\n",
])
def test_deep_manifest_is_a_model_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "manifest.toml"
    path.write_text(text)
    with pytest.raises(ModelError, match="cannot be used"):
        load_catalog(path)


def test_huge_manifest_is_a_model_error(tmp_path: Path) -> None:
    path = tmp_path / "manifest.toml"
    with path.open("wb") as handle:
        handle.truncate(64 << 20)
    with pytest.raises(ModelError, match="larger than"):
        load_catalog(path)


@FUZZ
@given(st.binary(max_size=2048))
def test_any_manifest_bytes_give_a_catalog_or_a_model_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "manifest.toml"
    path.write_bytes(data)
    with contextlib.suppress(ModelError):
        load_catalog(path)


@FUZZ
@given(st.binary(max_size=2048))
def test_any_sums_bytes_are_read_or_ignored(tmp_path: Path, data: bytes) -> None:
    (tmp_path / SUMS_FILE).write_bytes(data)
    (tmp_path / ".hanasu-verified").write_bytes(data)
    assert isinstance(read_sums(tmp_path), dict)
    assert isinstance(read_stamps(tmp_path), dict)


def test_huge_sums_file_is_ignored(tmp_path: Path) -> None:
    with (tmp_path / SUMS_FILE).open("wb") as handle:
        handle.truncate(1 << 30)
    assert read_sums(tmp_path) == {}


def test_deep_piper_config_is_an_engine_load_error(tmp_path: Path) -> None:
    from app.adapters.piper_tts import PiperSynthesizer, embedded_voice_path

    voice = tmp_path / "voice.onnx"
    voice.write_bytes(Path(embedded_voice_path()).read_bytes())
    (tmp_path / "voice.onnx.json").write_text("[" * 5_000 + "]" * 5_000)
    with pytest.raises(EngineLoadError, match="nested more than"):
        PiperSynthesizer(voice)
