"""`hanasu doctor`: runs on this machine as a subprocess, opens no socket, says what is wrong."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli import doctor
from app.gpu import Gpu
from app.models.catalog import load_catalog
from app.models.machine import LlamaBuild
from app.models.resolve import entry_root
from app.paths import repo_root
from app.storage.settings import Settings, save_settings

GIB = 1 << 30
SECTIONS = ("== System", "== GPU and language model runtime", "== Audio", "== Models",
            "== Disk", "== Recommended tier")


class Probe:
    """A machine with an RTX 3060 and a CPU-only llama-cpp-python."""

    def system(self) -> str:
        return "Simulated 1.0"

    def gpu(self) -> Gpu | None:
        return Gpu("NVIDIA GeForce RTX 3060", 12 * GIB, 11 * GIB, GIB)

    def llama(self) -> LlamaBuild:
        return LlamaBuild("0.3.36", "CPU", False)

    def ram_bytes(self) -> int | None:
        return 31 * GIB

    def cores(self) -> int:
        return 16

    def disk_free_bytes(self, path: Path) -> int | None:
        return 200 * GIB


@pytest.fixture
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    monkeypatch.setenv("HANASU_DATA_DIR", str(data))
    monkeypatch.setenv("HANASU_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))  # paths under it are written as ~
    return data


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Any socket use is recorded and refused."""
    tried: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        tried.append(repr(args[:2]))
        raise OSError("the network is off in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return tried


def test_doctor_runs_as_a_subprocess_on_this_machine(tmp_path: Path) -> None:
    env = {**os.environ, "HANASU_DATA_DIR": str(tmp_path / "data"),
           "HANASU_CONFIG_DIR": str(tmp_path / "config")}
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run([sys.executable, "-m", "app", "doctor"], cwd=repo_root(), env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    for section in SECTIONS:
        assert section in done.stdout, done.stdout
    assert "llm embedded: SmolLM2" in done.stdout and ": ok" in done.stdout
    assert "why:" in done.stdout and "first word" in done.stdout
    assert done.stdout.rstrip().endswith("problem(s) found")


def test_doctor_opens_no_socket_and_names_the_fix(
    private_dirs: Path, no_sockets: list[str]
) -> None:
    out = io.StringIO()
    code = doctor.report(out, Probe())
    text = out.getvalue()
    assert no_sockets == []
    assert code == 1  # the unused GPU is a problem the user can fix
    assert "RTX 3060 12 GB unused" in text
    assert "CPU-only build" in text and "GGML_CUDA=on" in text
    assert "tier:                 cpu-large" in text
    assert "not gpu-small: no GPU the language model can use" in text


def test_a_damaged_download_is_reported(private_dirs: Path, no_sockets: list[str]) -> None:
    entry = load_catalog().entry("asr", "small")
    root = entry_root(entry, private_dirs / "models")
    root.mkdir(parents=True)
    (root / "model.bin").write_bytes(b"\0" * 1000)  # the manifest says 483546902 bytes
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        (root / name).write_text("{}")
    out = io.StringIO()
    assert doctor.report(out, Probe()) == 1
    text = out.getvalue()
    assert "asr small: Whisper small" in text and "DAMAGED" in text
    assert "model.bin: wrong-size 1000 bytes, expected 483546902" in text
    assert "run `hanasu models verify asr`" in text
    assert "in ~/data/models/faster-whisper-small: DAMAGED" in text


def test_unknown_option_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor.main(["--bogus"]) == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_a_clean_clone_reports_the_checkout_version(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata
    import tomllib

    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    with (repo_root() / "pyproject.toml").open("rb") as fh:
        version = tomllib.load(fh)["project"]["version"]
    assert doctor.app_version() == f"{version} (checkout, not installed)"


def test_a_new_user_sees_nothing_downloaded_and_the_hub(
    private_dirs: Path, no_sockets: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    out = io.StringIO()
    doctor.report(out, Probe(), hash_models=False)
    text = out.getvalue()
    assert "downloaded:           none yet" in text
    assert "from:                 huggingface.co (no mirror set)" in text
    assert "picked:               none: the app loads the best model downloaded" in text
    assert "llm now:              SmolLM2 135M" in text and "(embedded)" in text
    assert "ram:                  31.0 GiB" in text  # as the tier lines count it ("31 GB RAM")


@pytest.mark.parametrize(("setting", "env", "expected"), [
    ("https://hf-mirror.com/", None, "the mirror https://hf-mirror.com (set in the Models dialog)"),
    (None, "http://proxy.local:8080", "the mirror http://proxy.local:8080 (set in HF_ENDPOINT)"),
])
def test_the_download_mirror_is_named(
    private_dirs: Path, no_sockets: list[str], monkeypatch: pytest.MonkeyPatch,
    setting: str | None, env: str | None, expected: str
) -> None:
    save_settings(Settings(model_endpoint=setting))
    if env is None:
        monkeypatch.delenv("HF_ENDPOINT", raising=False)
    else:
        monkeypatch.setenv("HF_ENDPOINT", env)
    out = io.StringIO()
    doctor.report(out, Probe(), hash_models=False)
    assert f"from:                 {expected}\n" in out.getvalue()
    assert no_sockets == []


def test_a_bad_mirror_is_a_problem(private_dirs: Path, no_sockets: list[str]) -> None:
    save_settings(Settings(model_endpoint="hf-mirror.com"))
    out = io.StringIO()
    assert doctor.report(out, Probe(), hash_models=False) == 1
    assert "PROBLEM: download mirror 'hf-mirror.com' is not an http:// or https:// address" \
        in out.getvalue()


def test_the_picked_tier_and_what_each_role_loads(
    private_dirs: Path, no_sockets: list[str]
) -> None:
    save_settings(Settings(model_tier="cpu-medium", llm_backend="server",
                           llm_server_url="http://127.0.0.1:9/v1"))
    out = io.StringIO()
    doctor.report(out, Probe(), hash_models=False)
    text = out.getvalue()
    assert "picked:               cpu-medium (in the Models dialog): its models load first" in text
    assert "llm now:              a language model server (set in Settings)" in text
    assert "127.0.0.1" not in text  # the server's address stays out of a pasted report
    assert "asr now:              Whisper tiny.en" in text  # Whisper small is not downloaded
    save_settings(Settings(model_tier="gone"))
    out = io.StringIO()
    doctor.report(out, Probe(), hash_models=False)
    assert "picked:               'gone', which the manifest no longer has (ignored)" \
        in out.getvalue()
