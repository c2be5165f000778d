"""``hanasu bench switch`` end to end on the fake engines: every switch is timed until the
pipeline is idle again, through every language and back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_switch_is_timed_until_the_persona_is_ready(tmp_path: Path) -> None:
    out = tmp_path / "switch.json"
    done = subprocess.run([sys.executable, "-m", "app", "bench", "switch", "--fake-engines",
                           "--json", str(out)], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    switches = report["switches"]
    assert [s["to"] for s in switches] == ["yui", "hana", "ming", "kai", "yui", "ming", "hana"]
    assert all(s["ready"] for s in switches)
    assert report["switch_ready_s"]["n"] == len(switches)
    assert report["over_5_s"] == []  # scripted engines load nothing
