"""``hanasu bench decode``: the embedded model's decode speed per sampler and drafting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_bench_decode_reports_speed_for_the_app_sampler_and_prompt_lookup(
    tmp_path: Path,
) -> None:
    report_path = tmp_path / "decode.json"
    done = subprocess.run(
        [sys.executable, "-m", "app", "bench", "decode", "--variants", "app,lookup4",
         "--questions", "2", "--max-tokens", "12", "--json", str(report_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(report_path.read_text())
    assert set(report["variants"]) == {"app", "lookup4"} and report["threads"] >= 1
    for figures in report["variants"].values():
        assert figures["tokens"] > 2
        assert figures["decode_tokens_per_s"]["p50"] > 0
        assert 0 < figures["first_token_s"]["p50"] < 30
    assert "app " in done.stdout and "lookup4" in done.stdout


def test_an_unknown_variant_is_refused_with_the_known_ones() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", "bench", "decode", "--variants", "fastest"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode != 0
    assert "unknown variant(s) fastest" in done.stderr
