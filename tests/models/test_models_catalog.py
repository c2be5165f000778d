"""The manifest loads, its built-in copy matches, and the embedded models exist here."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.models.catalog import (
    EMBEDDED,
    ROLES,
    default_manifest_path,
    load_catalog,
    parse_catalog,
)
from app.models.errors import ModelError
from app.models.resolve import resolve
from app.paths import repo_root


def test_default_manifest_is_identical_to_the_tracked_one() -> None:
    tracked = repo_root() / "models" / "manifest.toml"
    assert tracked.read_bytes() == default_manifest_path().read_bytes()


def test_manifest_has_production_and_embedded_entries() -> None:
    catalog = load_catalog()
    for role in ROLES:
        assert catalog.entry(role, EMBEDDED).source == "package"
    llm = catalog.entry("llm")
    assert llm.repo == "ggml-org/gemma-4-26B-A4B-it-GGUF"
    assert llm.total_size == 16796015136
    assert catalog.entry("asr").files[0].size == 1617884929
    tts = catalog.entry("tts")
    assert tts.file_url(tts.files[0]) == (
        "https://github.com/thewh1teagle/kokoro-onnx/releases/download/model-files-v1.0/"
        "kokoro-v1.0.int8.onnx"
    )
    assert catalog.entry("llm", "alt").repo == "unsloth/gemma-4-26B-A4B-it-GGUF"


def test_builtin_copy_loads(tmp_path: Path) -> None:
    assert load_catalog(default_manifest_path()).entry("vad", EMBEDDED).package == "faster_whisper"


@pytest.mark.parametrize("role", ROLES)
def test_embedded_models_resolve_to_real_files(role: str) -> None:
    resolved = resolve(role, prefer="embedded")  # type: ignore[arg-type]
    assert resolved.source == "embedded"
    assert resolved.path.exists()
    assert resolved.size_bytes > 0


def test_invalid_manifest_gives_one_line() -> None:
    with pytest.raises(ModelError) as info:
        parse_catalog({"llm": {"embedded": {"title": "x", "source": "package", "main": "a"}}})
    assert "\n" not in str(info.value)
    assert "manifest" in str(info.value)


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not found"):
        load_catalog(tmp_path / "nope.toml")


def test_guard_blocks_the_internet() -> None:
    import socket

    with pytest.raises(RuntimeError, match="tried to"):
        socket.create_connection(("203.0.113.1", 443), timeout=1)
