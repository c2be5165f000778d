"""``hanasu bench tiers --small``: every CPU tier of the manifest is measured on its model's
architecture (scaled down), warm turns reuse the persona, and the report names the machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from app.models.catalog import load_catalog
from app.paths import repo_root
from bench import gemma4_gguf
from bench.tiers import SMALL_SHAPES, stats


def _bench(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "bench", "tiers", "--small", "--prefix", "96",
         "--user-tokens", "8", "--tokens", "6", "--chunk-tokens", "3", "--cache",
         str(tmp_path), *extra],
        cwd=repo_root(), capture_output=True, text=True, timeout=300, check=False)


def test_stats_give_the_slow_end_as_p90() -> None:
    values = [float(v) for v in range(1, 11)]
    assert stats(values) == {"median": 5.5, "p90": 9.1}
    assert stats(values, slow_is_low=True) == {"median": 5.5, "p90": 1.9}


def test_bench_tiers_measures_every_cpu_tier(tmp_path: Path) -> None:
    report_path = tmp_path / "tiers.json"
    done = _bench(tmp_path, "--with-26b", "--repeats", "3", "--json", str(report_path))
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(report_path.read_text())
    cpu_tiers = [t for t in load_catalog().tiers.values()
                 if t.placement == "cpu" and t.llm in SMALL_SHAPES]
    assert [row["tier"] for row in report["tiers"]] == [t.name for t in cpu_tiers]
    assert {row["tier"] for row in report["tiers"]} >= {"cpu-small", "cpu-medium", "cpu-large"}
    assert "cores" in report["machine"] and "say nothing about answer quality" in report["note"]
    assert report["decode_threads"] is not None and report["settings"]["prefix"] == 96
    for row, tier in zip(report["tiers"], cpu_tiers, strict=True):
        assert row["shapes"] == SMALL_SHAPES[tier.llm].name
        runs, s = row["runs"], row["stats"]
        assert all(len(values) == 3 for values in runs.values())
        # the persona is reused: a warm turn evaluates 8 tokens, a cold one 104
        assert s["warm_ttft_s"]["median"] < s["cold_ttft_s"]["median"]
        assert all(c >= w for c, w in zip(runs["first_chunk_s"], runs["warm_ttft_s"],
                                          strict=True))
        assert s["decode_tok_s"]["median"] > 0
        assert s["decode_tok_s"]["p90"] <= s["decode_tok_s"]["median"]
        assert s["warm_ttft_s"]["p90"] >= s["warm_ttft_s"]["median"]
        assert row["rss_end_mib"] > 0 and row["load_s"] > 0
    table = done.stdout[done.stdout.index("| tier |"):]
    assert len(table.strip().splitlines()) == 2 + len(cpu_tiers)
    assert "E2B" in table and "E4B" in table
    written = sorted(p.name for p in tmp_path.glob("*.gguf*"))
    assert written == sorted(f"{s.name}-v{gemma4_gguf.VERSION}.gguf"
                             for s in SMALL_SHAPES.values())

    again = _bench(tmp_path, "--repeats", "1")  # the files are reused, the 26B is skipped
    assert again.returncode == 0, again.stderr[-2000:]
    assert "writing" not in again.stdout
    assert "skipping cpu-large" in again.stdout and "| cpu-large |" not in again.stdout
