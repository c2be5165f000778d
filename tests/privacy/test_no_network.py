"""Nothing leaves the machine: ``run``, the desktop app and the self-test, with the real
embedded engines, under ``strace -f``, make no internet connection or DNS lookup and write
no file outside the app's own folders and the paths the user named.

onnxruntime 1.2x/1.3x phones home (a DNS lookup of mobile.events.data.microsoft.com and a
device id under ~/.cache/Microsoft) unless ORT_DISABLE_TELEMETRY=1 is set before it loads;
app/privacy.py does that first thing. Needs ``strace`` (installed in CI; root can trace).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.privacy.trace import (
    REPO,
    Traced,
    run_traced,
    run_traced_until,
    strace_env,
    violations,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _needs_strace() -> None:
    if shutil.which("strace") is None:
        pytest.fail("strace is not installed (apt-get install strace): the privacy tests need it")


def question(folder: Path) -> Path:
    raw, padded = folder / "raw.wav", folder / "question.wav"
    subprocess.run(
        ["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(raw), "What is your name?"],
        check=True,
    )
    subprocess.run(["sox", str(raw), str(padded), "pad", "0.3", "0.8"], check=True)
    return padded


def assert_private(traced: Traced, home: Path, named: list[Path]) -> None:
    assert traced.lines, "strace wrote no trace"
    found = violations(traced, home, named)
    assert not found, "the app reached out or wrote outside its folders:\n" + "\n".join(
        found[:30]
    )


def test_the_checker_catches_a_lookup_and_a_stray_file(tmp_path: Path) -> None:
    """The trace checker itself: a DNS lookup and a file in ~/.cache are both reported
    (so a passing privacy test means something)."""
    home = tmp_path / "home"
    home.mkdir()
    probe = (
        "import os, socket\n"
        "os.makedirs(os.path.expanduser('~/.cache/Vendor'), exist_ok=True)\n"
        "open(os.path.expanduser('~/.cache/Vendor/deviceid'), 'w').write('x')\n"
        "try:\n"
        "    socket.getaddrinfo('telemetry.invalid', 443)\n"
        "except OSError:\n"
        "    pass\n"
    )
    traced = run_traced(
        ["-c", probe], strace_env(home), tmp_path / "probe.trace", 60, [sys.executable]
    )
    found = "\n".join(violations(traced, home))
    assert "network:" in found or "nscd" in found, found
    assert "write:" in found and "deviceid" in found
    assert "left behind:" in found


def test_checker_command_line_on_a_harmless_program(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.privacy.trace", "--", sys.executable, "-c", "print(1)"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 violation(s)" in done.stdout


def test_run_with_real_engines_stays_on_the_machine(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    wav = question(work)
    out, timeline = work / "out" / "reply.wav", work / "out" / "timeline.json"
    out.parent.mkdir()
    traced = run_traced(
        ["run", "--input", str(wav), "--output", str(out), "--timeline", str(timeline)],
        strace_env(home),
        tmp_path / "run.trace",
        timeout=400,
    )
    assert traced.returncode == 0, traced.stderr
    assert out.is_file() and timeline.is_file()
    assert_private(traced, home, [out, timeline])


def test_japanese_and_mandarin_engines_stay_on_the_machine(tmp_path: Path) -> None:
    """Riko (en/ja/zh) loads the multilingual Whisper, both Kokoro voices and their
    phonemizers (Open JTalk, jieba, pypinyin, OpenCC): libraries that elsewhere fetch a
    dictionary on first use or cache to /tmp must do neither here."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    wav = question(work)
    out, timeline = work / "out" / "reply.wav", work / "out" / "timeline.json"
    out.parent.mkdir()
    traced = run_traced(
        ["run", "--persona", "riko", "--input", str(wav), "--output", str(out),
         "--timeline", str(timeline)],
        strace_env(home),
        tmp_path / "run-cjk.trace",
        timeout=600,
    )
    assert traced.returncode == 0, traced.stderr
    assert out.is_file() and timeline.is_file()
    assert_private(traced, home, [out, timeline])


def test_desktop_app_with_real_engines_stays_on_the_machine(tmp_path: Path) -> None:
    """The window with the real engines until they are ready, a few seconds idle, SIGTERM."""
    home = tmp_path / "home"
    home.mkdir()
    log = home / ".local" / "state" / "hanasu" / "log" / "hanasu.log"

    def engines_ready() -> bool:
        return log.is_file() and "engines ready" in log.read_text(errors="replace")

    env = strace_env(home, {"QT_QPA_PLATFORM": "offscreen"})
    traced = run_traced_until([], env, tmp_path / "gui.trace", engines_ready, timeout=300)
    assert engines_ready(), f"the engines never became ready:\n{traced.stderr}"
    assert traced.returncode == 0, traced.stderr  # SIGTERM quits the app normally
    assert_private(traced, home, [])


def test_self_test_stays_on_the_machine(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    traced = run_traced(["--self-test"], strace_env(home), tmp_path / "st.trace", timeout=400)
    assert "self-test" in traced.stdout, traced.stderr
    assert re.search(r"^OK\s+llm\b", traced.stdout, re.MULTILINE), traced.stdout
    assert_private(traced, home, [])


def test_doctor_stays_on_the_machine(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    traced = run_traced(["doctor"], strace_env(home), tmp_path / "doctor.trace", timeout=300)
    assert "== Recommended tier" in traced.stdout, traced.stderr
    assert_private(traced, home, [])


def test_bench_stays_on_the_machine(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    report = tmp_path / "bench.json"
    traced = run_traced(
        ["bench", "--count", "1", "--no-baseline", "--json", str(report)],
        strace_env(home),
        tmp_path / "bench.trace",
        timeout=400,
    )
    assert traced.returncode == 0, traced.stderr
    assert report.is_file()
    # bench speaks its test questions into a TemporaryDirectory (the OS temp dir, here
    # $TMPDIR) and removes it: allowed, as long as nothing is left there.
    temp = home / "tmp"
    assert_private(traced, home, [report, temp])
    assert not any(temp.iterdir()), list(temp.iterdir())
