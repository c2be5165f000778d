"""``hanasu bench --ui`` runs the real app in subprocesses and reports the desktop targets.

No timing assertions here: the targets are judged by the benchmark itself; these tests
only check that it measures something plausible and reports every field.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from bench import ui as bench_ui
from tests.support.system import require_tools


def _run(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    parser = argparse.ArgumentParser()
    bench_ui.add_arguments(parser)
    path = tmp_path / "report.json"
    code = bench_ui.main(parser.parse_args([*argv, "--json", str(path)]))
    return code, json.loads(path.read_text())


def test_parse_stalls_reads_the_apps_exit_line() -> None:
    text = ("INFO app.ui.main: max UI stall 12.5 ms (after engines ready 8.0 ms; during turns "
            "7.5 ms over 2 turns); unix times: shown 100.250; painted 100.300; ready 101.000\n")
    stalls = bench_ui.parse_stalls(text)
    assert stalls == {"max_ui_stall_ms": 12.5, "max_ui_stall_after_ready_ms": 8.0,
                      "max_ui_stall_during_turns_ms": 7.5, "turn_spans": 2,
                      "unix_times": {"shown": 100.25, "painted": 100.3, "ready": 101.0}}
    assert bench_ui.parse_stalls("nothing here") is None


def test_startup_launch_with_fake_engines(tmp_path: Path) -> None:
    code, report = _run(tmp_path, "--fake-engines", "--launches", "1", "--no-live",
                        "--platform", "offscreen")
    assert code == 0, report
    assert report["machine"] and report["engines"] == "fake"
    (launch,) = report["launches"]
    assert launch["exit_code"] == 0
    assert 0 < launch["window_shown_s"] <= launch["window_visible_s"] < 60
    assert launch["window_visible_s"] <= launch["engines_ready_s"] < 60
    assert launch["startup_max_ui_stall_ms"] >= 0
    for key in ("window_visible_s", "engines_ready_s", "startup_max_ui_stall_ms"):
        stats = report[key]
        assert isinstance(stats, dict) and stats["n"] == 1 and stats["p50"] == stats["p90"]
    assert "window visible < 1.5 s (p90)" in report["targets"]


def test_pet_launches_start_as_the_pet(tmp_path: Path) -> None:
    code, report = _run(tmp_path, "--fake-engines", "--launches", "1", "--no-live",
                        "--platform", "offscreen", "--pet")
    assert code == 0, report
    assert report["view"] == "desktop pet"
    (launch,) = report["launches"]
    assert launch["exit_code"] == 0 and 0 < launch["window_visible_s"] < 60


def test_pet_settings_say_the_app_was_left_as_the_pet(tmp_path: Path) -> None:
    from app.storage.settings import load_settings

    bench_ui.write_view_settings(tmp_path, pet=False)
    assert not (tmp_path / "config").exists()  # a first launch, as before
    bench_ui.write_view_settings(tmp_path, pet=True)
    assert load_settings(tmp_path / "config" / "settings.json").pet_mode


@pytest.mark.slow
def test_live_launch_with_fake_engines(tmp_path: Path) -> None:
    """Xvfb (or DISPLAY), a private PulseAudio, a spoken question: idle CPU and stalls."""
    tools = ["pulseaudio", "pactl", "paplay", "espeak-ng"]
    require_tools(*tools)
    code, report = _run(tmp_path, "--fake-engines", "--launches", "1", "--idle-seconds", "3",
                        "--settle-seconds", "1", "--timeout", "120")
    live = report["live"]
    assert code == 0, live
    assert isinstance(live, dict)
    assert 0 <= live["idle_cpu_percent"] < 200  # two threads could both be busy
    assert live["turns"][0]["replied"], live
    assert live["turn_spans"] >= 1
    assert 0 <= live["max_ui_stall_during_turns_ms"] <= live["max_ui_stall_ms"]
    assert live["exit_code"] == 0
    assert set(report["targets"]) == {
        "window visible < 1.5 s (p90)", "UI stall during turns < 50 ms",
        "idle CPU < 3 % of one core"}
    assert live["load_average_before"] >= 0 and live["load_average_after"] >= 0


def test_room_noise_is_pink_at_the_asked_level(tmp_path: Path) -> None:
    import numpy as np
    import soundfile

    from bench.ui import room_noise_wav

    path = room_noise_wav(tmp_path, -55.0, 4.0)
    noise, rate = soundfile.read(str(path), dtype="float32")
    assert rate == 16_000 and noise.size == 4 * 16_000
    level = 20 * np.log10(float(np.sqrt(np.mean(np.square(noise)))))
    assert abs(level - -55.0) < 0.1
    power = np.abs(np.fft.rfft(noise)) ** 2
    freqs = np.fft.rfftfreq(noise.size, 1 / rate)
    low = power[(freqs > 100) & (freqs < 200)].mean()
    high = power[(freqs > 3200) & (freqs < 6400)].mean()
    assert 20 < low / high < 60  # about 3 dB an octave over five octaves (~15 dB)
