"""A download mirror: the setting, else HF_ENDPOINT, else the hub; tested against a local server."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from app.models import cli
from app.models.catalog import Catalog, ModelEntry, ModelFile, load_catalog
from app.models.endpoint import hub_endpoint
from app.models.errors import ModelError
from app.storage.settings import Settings, save_settings
from tests.models.models_fakehub import FakeHub

DATA = b"GGUF" + bytes(range(256)) * 512
SHA = hashlib.sha256(DATA).hexdigest()
REPO = "acme/tiny-GGUF"
PATH = f"/{REPO}/resolve/main/tiny.gguf"


@pytest.mark.parametrize(("setting", "env", "expected"), [
    (None, {}, None),
    ("", {"HF_ENDPOINT": "  "}, None),
    (None, {"HF_ENDPOINT": "https://hf-mirror.com/"}, "https://hf-mirror.com"),
    ("http://proxy.local:8080/hf", {"HF_ENDPOINT": "https://hf-mirror.com"},
     "http://proxy.local:8080/hf"),
])
def test_setting_then_environment_then_hub(
    setting: str | None, env: dict[str, str], expected: str | None
) -> None:
    assert hub_endpoint(setting, env) == expected


@pytest.mark.parametrize("bad", ["hf-mirror.com", "ftp://mirror", "https://", "http://m/?x=1"])
def test_a_mirror_that_is_not_a_web_address_is_refused(bad: str) -> None:
    with pytest.raises(ModelError, match="mirror"):
        hub_endpoint(bad, {})


def _catalog() -> Catalog:
    real = load_catalog()
    tiny = ModelEntry(role="llm", variant="production", title="tiny", source="hf", repo=REPO,
                      dir="tiny", main="tiny.gguf", files=(ModelFile(name="tiny.gguf"),))
    roles = {**real.roles, "llm": {**real.roles["llm"], "production": tiny}}
    return Catalog(roles=roles, tiers=real.tiers)


@pytest.fixture
def mirror(fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    fake_hub.add(PATH, DATA, SHA)
    monkeypatch.setattr(cli, "load_catalog", _catalog)
    return fake_hub


def test_hf_endpoint_sends_the_download_to_the_mirror(
    mirror: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", mirror.url + "/")
    out = io.StringIO()
    assert cli.main(["download", "llm", "--yes", "--dir", str(tmp_path)], out=out) == 0
    assert (tmp_path / "tiny" / "tiny.gguf").read_bytes() == DATA
    assert f"from the mirror {mirror.url}\n" in out.getvalue()
    assert ("GET", PATH, None) in mirror.requests


def test_the_option_wins_over_the_environment(
    mirror: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    args = ["download", "llm", "--yes", "--dir", str(tmp_path), "--endpoint", mirror.url]
    assert cli.main(args, out=io.StringIO()) == 0
    assert (tmp_path / "tiny" / "tiny.gguf").is_file()


def test_a_bad_mirror_is_one_line_and_downloads_nothing(
    mirror: FakeHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["download", "llm", "--yes", "--dir", str(tmp_path), "--endpoint", "hf-mirror.com"]
    assert cli.main(args, out=io.StringIO()) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an http:// or https:// address" in err
    assert mirror.requests == [] and not (tmp_path / "tiny").exists()


def test_the_mirror_set_in_the_app_is_used_by_the_command_line(
    mirror: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the setting wins over it
    save_settings(Settings(model_endpoint=mirror.url))
    out = io.StringIO()
    assert cli.main(["download", "llm", "--yes", "--dir", str(tmp_path)], out=out) == 0
    assert f"from the mirror {mirror.url}\n" in out.getvalue()
    assert ("GET", PATH, None) in mirror.requests
    assert (tmp_path / "tiny" / "tiny.gguf").read_bytes() == DATA
