"""The real entry point: `python -m app --fake-engines` shows the window fast and quits cleanly."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_app_starts_with_fake_engines(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HANASU_NO_AUDIO": "1",
           "HANASU_EXIT_WHEN_READY": "1", "HANASU_CONFIG_DIR": str(tmp_path / "c"),
           "HANASU_DATA_DIR": str(tmp_path / "d"), "HANASU_LOG_DIR": str(tmp_path / "l")}
    done = subprocess.run([sys.executable, "-m", "app", "--fake-engines"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = re.search(r"window visible after (\d+) ms; engines ready after (\d+) ms", done.stderr)
    assert found, done.stderr
    assert int(found.group(1)) < 1500
    assert "Traceback" not in done.stderr
