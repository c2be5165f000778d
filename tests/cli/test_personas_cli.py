"""``hanasu personas``: list, import (card or TOML), export (PNG, JSON, TOML), validate;
through ``app.__main__.main`` and once as a real subprocess."""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from app.__main__ import main
from app.personas.card_file import parse_card
from app.personas.loader import load_persona_library, user_personas_dir


@pytest.fixture(autouse=True)
def user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HANASU_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HANASU_LOG_DIR", str(tmp_path / "log"))


def _card(tmp_path: Path, name: str = "Lumi") -> Path:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    card = {"spec": "chara_card_v3", "spec_version": "3.0",
            "data": {"name": name, "description": "A lighthouse keeper.",
                     "first_mes": "The lamp is lit.", "tags": ["sea"]}}
    rows = b"".join(b"\0" + b"\x20\x40\x60" * 2 for _ in range(2))
    path = tmp_path / f"{name.lower()}.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0,
                                                                       0, 0))
                     + chunk(b"IDAT", zlib.compress(rows))
                     + chunk(b"tEXt", b"ccv3\0" + base64.b64encode(json.dumps(card).encode()))
                     + chunk(b"IEND", b""))
    return path


def test_list_shows_builtins_and_skipped_files(capsys: pytest.CaptureFixture[str]) -> None:
    folder = user_personas_dir()
    folder.mkdir(parents=True)
    (folder / "bad.toml").write_text("id = 5\n", encoding="utf-8")
    assert main(["personas", "list"]) == 0
    out, err = capsys.readouterr()
    for persona_id in ("hana", "kai", "captain", "riko", "wren", "tess"):
        assert persona_id in out
    assert "built-in" in out
    assert "bad.toml" in err


def test_import_export_validate_round_trip(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    card = _card(tmp_path)
    assert main(["personas", "validate", str(card)]) == 0
    assert "valid character card v3" in capsys.readouterr().out
    assert main(["personas", "import", str(card)]) == 0
    assert "as 'lumi'" in capsys.readouterr().out
    lumi = load_persona_library().get("lumi")
    assert lumi.greeting == "The lamp is lit."
    out_png, out_json, out_toml = (tmp_path / "x.png", tmp_path / "x.json", tmp_path / "x.toml")
    for target in (out_png, out_json, out_toml):
        assert main(["personas", "export", "lumi", str(target)]) == 0
    again = parse_card(out_png.read_bytes())
    assert again.data["name"] == "Lumi" and again.data["tags"] == ["sea"]
    assert json.loads(out_json.read_text())["spec"] == "chara_card_v3"
    assert main(["personas", "validate", str(out_toml)]) == 0
    assert main(["personas", "import", str(out_toml)]) == 1  # same id: refused, one line
    assert "exists already" in capsys.readouterr().err


def test_builtin_exports_and_toml_imports_under_a_new_id(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "riko.toml"
    assert main(["personas", "export", "riko", str(target)]) == 0
    target.write_text(target.read_text().replace('id = "riko"', 'id = "my-riko"'))
    assert main(["personas", "import", str(target)]) == 0
    assert load_persona_library().get("my-riko").voice.kokoro == "af_nicole"


@pytest.mark.parametrize("args, message", [
    (["validate", "{tmp}/nope.png"], "cannot read"),
    (["validate", "{tmp}/garbage.png"], "neither a PNG nor JSON"),
    (["export", "nobody", "{tmp}/x.png"], "unknown persona 'nobody'"),
    (["export", "hana", "{tmp}/x.gif"], "use .png"),
    (["import", "{tmp}/garbage.png"], "neither a PNG nor JSON"),
])
def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             args: list[str], message: str) -> None:
    (tmp_path / "garbage.png").write_bytes(b"GIF89a....")
    assert main(["personas", *[a.format(tmp=tmp_path) for a in args]]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_real_command_line(tmp_path: Path) -> None:
    card = _card(tmp_path, "Nami")
    env = {**os.environ, "HANASU_DATA_DIR": str(tmp_path / "data"),
           "HANASU_CONFIG_DIR": str(tmp_path / "config"), "HANASU_LOG_DIR": str(tmp_path / "l")}
    done = subprocess.run([sys.executable, "-m", "app", "personas", "import", str(card)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run([sys.executable, "-m", "app", "personas", "list"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert listed.returncode == 0 and "nami" in listed.stdout
