"""``hanasu bench tools``: the scripted round trip sets a real timer and reports each part
of it; a real Gemma 4 GGUF is asked to set one through the app's own tool loop, and a model
that does not call the tool (random weights) fails the check with exit status 1, which is
what the GPU script's tool step relies on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.paths import repo_root
from bench import gemma4_gguf


def _bench(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict]:  # type: ignore[type-arg]
    report = tmp_path / "tools.json"
    done = subprocess.run(
        [sys.executable, "-m", "app", "bench", "tools", "--runs", "3", "--json", str(report),
         *extra], cwd=repo_root(), capture_output=True, text=True, timeout=300, check=False)
    return done, json.loads(report.read_text()) if report.exists() else {}


def test_the_scripted_round_trip_reports_each_part(tmp_path: Path) -> None:
    done, report = _bench(tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    scripted = report["scripted"]
    for key in ("plain_answer_s", "tool_answer_s", "call_to_result_s",
                "call_to_next_round_s", "call_to_answer_sentence_s"):
        assert scripted[key]["n"] == 3, key
    # the answer after a call cannot come before the call's own tokens were written
    assert scripted["tool_answer_s"]["p50"] > scripted["call_to_answer_sentence_s"]["p50"]
    assert "call to result" in done.stdout


@pytest.mark.slow
def test_a_model_that_calls_nothing_fails_the_check(tmp_path: Path) -> None:
    path = gemma4_gguf.write(tmp_path / "small.gguf", gemma4_gguf.SMALL)
    done, report = _bench(tmp_path, "--gguf", str(path), "--n-gpu-layers", "0")
    assert done.returncode == 1, done.stderr[-2000:]
    real = report["real_model"]
    assert real["tools_offered"] is True and real["ok"] is False and real["calls"] == []
    assert "FAILED" in done.stdout
