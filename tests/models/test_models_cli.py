"""`hanasu models ...` through main(): output, exit codes, one-line errors."""

from __future__ import annotations

import importlib
import io
from pathlib import Path

import pytest

from app.models.cli import main


@pytest.fixture(autouse=True)
def no_repo_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep weights someone put in the checkout's models/ folder out of these tests."""
    # the package re-exports resolve(), which shadows the submodule attribute
    resolve_mod = importlib.import_module("app.models.resolve")
    monkeypatch.setattr(resolve_mod, "repo_models_dir", lambda: tmp_path / "repo-models")


def test_list_shows_used_and_production(data_dir: Path) -> None:
    out = io.StringIO()
    assert main(["list"], out=out) == 0
    text = out.getvalue()
    assert "llm  using embedded:" in text
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in text
    assert "missing (16.8 GB) — run `hanasu models download llm`" in text
    assert "vad  using embedded:" in text


def test_list_reports_incomplete_download(data_dir: Path) -> None:
    part = data_dir / "models" / "gemma-4-26B-A4B-it-GGUF" / "gemma-4-26B-A4B-it-Q4_K_M.gguf.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"GGUF")
    out = io.StringIO()
    assert main(["models", "list"], out=out) == 0
    assert "incomplete" in out.getvalue()


def test_broken_model_is_one_line_and_exit_1(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    final = data_dir / "models" / "gemma-4-26B-A4B-it-GGUF" / "gemma-4-26B-A4B-it-Q4_K_M.gguf"
    final.parent.mkdir(parents=True)
    final.write_bytes(b"GGUF" + b"\0" * 100)
    out = io.StringIO()
    assert main(["list"], out=out) == 1
    assert "is incomplete (104 of 16796015136 bytes)" in out.getvalue()


def test_download_without_tty_needs_yes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO())
    assert main(["download", "tts"], out=io.StringIO()) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: Download 120.6 MB to ")
    assert "--yes" in err
    assert err.count("\n") == 1


def test_download_embedded_variant_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["download", "vad", "--variant", "embedded", "--yes"], out=io.StringIO()) == 1
    assert "ships with the app" in capsys.readouterr().err


def test_unknown_variant(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["download", "llm", "--variant", "nope", "--yes"]) == 1
    assert "known: production, alt, e4b, e2b, embedded" in capsys.readouterr().err


def test_verify_embedded_ok() -> None:
    """Embedded files are hashed against the sha256 their package's RECORD lists."""
    out = io.StringIO()
    assert main(["verify", "vad"], out=out) == 0
    assert "vad embedded: assets/silero_vad_v6.onnx: ok\n" in out.getvalue()


def test_bad_usage_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
