"""`hanasu` with no screen to open the window on: one clear line and exit 1, not Qt's abort."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.ui.display_check import missing_display

REPO = Path(__file__).resolve().parents[2]


def test_without_a_display_the_app_says_what_to_do_instead(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items()
           if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env |= {"HANASU_DATA_DIR": str(tmp_path / "data"),
            "HANASU_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-m", "app"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "no display" in done.stderr and "hanasu run --input" in done.stderr
    assert "Fatal Python error" not in done.stderr and "Traceback" not in done.stderr


def test_which_systems_need_a_display_server() -> None:
    assert missing_display({}, "linux") is not None
    assert missing_display({"DISPLAY": ":0"}, "linux") is None
    assert missing_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert missing_display({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None  # the user's pick
    assert missing_display({}, "win32") is None and missing_display({}, "darwin") is None
