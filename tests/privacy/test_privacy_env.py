"""app/privacy.py: which switches are forced, which are only defaulted, and that every entry
point applies them before anything else."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from app.privacy import disable_telemetry, downloads_requested

REPO = Path(__file__).resolve().parents[2]


def test_telemetry_is_forced_off_even_if_the_user_turned_it_on() -> None:
    env = {"ORT_DISABLE_TELEMETRY": "0", "HF_HUB_DISABLE_TELEMETRY": "0"}
    disable_telemetry(environ=env)
    assert env["ORT_DISABLE_TELEMETRY"] == "1"
    assert env["HF_HUB_DISABLE_TELEMETRY"] == "1"
    assert env["DO_NOT_TRACK"] == "1"
    assert env["HF_HUB_OFFLINE"] == "1"


def test_an_explicit_offline_choice_is_kept_and_downloads_leave_the_hub_on() -> None:
    env = {"HF_HUB_OFFLINE": "0"}
    disable_telemetry(environ=env)
    assert env["HF_HUB_OFFLINE"] == "0"
    env = {}
    disable_telemetry(allow_downloads=True, environ=env)
    assert "HF_HUB_OFFLINE" not in env
    assert env["ORT_DISABLE_TELEMETRY"] == "1"


@pytest.mark.parametrize(
    ("argv", "downloads"),
    [
        (["run", "--input", "q.wav", "--output", "o.wav"], False),
        (["-v", "bench"], False),
        (["--self-test"], False),
        (["models", "list"], False),
        (["models", "verify", "llm"], False),
        (["doctor"], False),
        (["models", "download", "tts", "--yes"], True),
        (["-v", "models", "download", "llm"], True),
        ([], True),  # the desktop app: its model dialog downloads on request
        (["--fake-engines"], True),
    ],
)
def test_only_commands_that_download_keep_the_hub_reachable(
    argv: list[str], downloads: bool
) -> None:
    assert downloads_requested(argv) is downloads


def test_python_m_app_applies_it_before_anything_loads() -> None:
    """``python -m app run ...`` has telemetry and the hub off by the time the command runs,
    and onnxruntime is not imported before that."""
    probe = (
        "import os, sys\n"
        "import app.cli.run as run\n"
        "def main(args):\n"
        "    loaded = 'onnxruntime' in sys.modules\n"
        "    print(os.environ.get('ORT_DISABLE_TELEMETRY'), os.environ.get('HF_HUB_OFFLINE'),"
        " loaded)\n"
        "    return 0\n"
        "run.main = main\n"
        "from app.__main__ import main as app_main\n"
        "sys.exit(app_main(['run', '--input', 'x.wav', '--output', 'y.wav']))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "1", "False"]


def test_frozen_launcher_applies_it_first() -> None:
    """The PyInstaller entry script calls disable_telemetry before freeze_support (worker
    processes) and before importing the app."""
    launcher = REPO / "assets" / "packaging" / "pyinstaller" / "launcher.py"
    tree = ast.parse(launcher.read_text(encoding="utf-8"))
    [block] = [node for node in tree.body if isinstance(node, ast.If)]
    calls = [
        ast.unparse(node.value.func)
        for node in block.body
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    ]
    imports = [
        node.module for node in block.body if isinstance(node, ast.ImportFrom) and node.module
    ]
    assert imports[0] == "app.privacy"
    assert calls[:2] == ["disable_telemetry", "multiprocessing.freeze_support"]
