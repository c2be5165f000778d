"""``hanasu bench --ui``: the desktop targets, measured on the real app in subprocesses.

Targets (the desktop issue; issue 7 for idle CPU): the window is visible < 1.5 s after
launch; the UI thread is never blocked > 50 ms during a turn; idle CPU while listening is
< 3 % of one core. The load average is printed with the idle CPU: on a shared machine a
busy neighbour makes every thread's wake-ups dearer.

* Startup, ``--launches`` times: ``python -m app`` with ``HANASU_EXIT_WHEN_READY=1``. The
  app prints the wall-clock (``time.time``) moments of its window's first paint and of
  the engines being ready; both are taken relative to ``time.time()`` read here just
  before ``Popen``, so interpreter start-up and imports count.
* Live, one more launch that keeps running, with real audio devices on a private
  PulseAudio server (``virtual_audio.py``: null sinks, the microphone is the
  ``micfeed`` sink's monitor) under X (``DISPLAY`` or a private Xvfb). Once the engines
  and devices are up (``audio devices: Microphone`` in the ``-v`` log) and a settle
  period has passed, the process's CPU time (``/proc/<pid>/stat`` utime + stime, all
  threads) over ``--idle-seconds`` of silence gives idle CPU as % of one core. Then
  espeak-ng questions are played into the microphone; after each reply was played
  ("user heard" in the log) the app gets SIGTERM and logs its heartbeat's worst GUI
  stall over the run, after the engines were ready, and during turns (from the user's
  first word until the assistant is idle again).

``--pet`` measures the same in desktop-pet mode: each launch's fresh config folder gets a
settings file saying the app was left as the pet (so it also starts as one, through the
path a user's settings take), and the full window stays hidden.

The live part needs pulseaudio, pactl, paplay, espeak-ng, and Xvfb when there is no
DISPLAY; it is skipped, with the reason in the report, when something is missing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.latency import QUESTIONS, machine_name, summary
from bench.virtual_audio import Pulse, Xvfb, missing_tools, stop_process

ROOT = Path(__file__).resolve().parents[1]
WINDOW_VISIBLE_TARGET_S = 1.5
TURN_STALL_TARGET_MS = 50.0
IDLE_CPU_TARGET_PERCENT = 3.0

_STALLS = re.compile(
    r"max UI stall (?P<all>[\d.]+) ms \(after engines ready (?P<ready>[\d.]+) ms; "
    r"during turns (?P<turns>[\d.]+) ms over (?P<spans>\d+) turns\); unix times: (?P<times>.*)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--launches", type=int, default=5, help="startup launches (default 5)")
    parser.add_argument("--fake-engines", action="store_true", help="scripted engines, no models")
    parser.add_argument(
        "--platform",
        choices=["xcb", "offscreen"],
        default="xcb",
        help="Qt platform: xcb on DISPLAY or a private Xvfb (default), "
        "or offscreen (no X server; not what a user sees)",
    )
    parser.add_argument(
        "--no-live",
        action="store_true",
        help="skip the live launch (idle CPU, UI stall during a turn)",
    )
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=10.0,
        help="silence over which idle CPU is measured (default 10)",
    )
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=3.0,
        help="wait after the devices opened before measuring idle CPU",
    )
    parser.add_argument(
        "--room-noise",
        type=float,
        default=None,
        metavar="DBFS",
        help="play a pink-noise floor at this level (e.g. -55) into the virtual microphone "
        "while idle CPU is measured: a real microphone is never digitally silent, and the "
        "VAD runs on every frame of a noisy one",
    )
    parser.add_argument(
        "--questions", type=int, default=1, help="spoken questions in the live launch (default 1)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="seconds allowed for each launch's engines, and each reply",
    )
    parser.add_argument(
        "--pet",
        action="store_true",
        help="launch as the desktop pet (only the character) instead of the full window",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, help="write the full report here")


# ---- small helpers -------------------------------------------------------------------


def _wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
    return True


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def cpu_seconds(pid: int, task: str | None = None) -> float:
    """utime + stime of a process (all its threads), or of one thread, from /proc."""
    path = f"/proc/{pid}/task/{task}/stat" if task else f"/proc/{pid}/stat"
    with open(path, encoding="ascii", errors="replace") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    # After "pid (comm)": field 3 (state) is fields[0], so utime (14) is fields[11].
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds per thread, keyed "name/tid" (the name is the kernel's 15-char comm)."""
    usage: dict[str, float] = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            name = Path(f"/proc/{pid}/task/{task}/comm").read_text().strip()
            usage[f"{name}/{task}"] = cpu_seconds(pid, task)
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue  # the thread ended
    return usage


def parse_stalls(text: str) -> dict[str, Any] | None:
    """The app's exit line (app/ui/main.py): worst GUI stalls and unix times."""
    matches = list(_STALLS.finditer(text))
    if not matches:
        return None
    found = matches[-1]
    times: dict[str, float] = {}
    for part in found.group("times").split(";"):
        name, _, value = part.strip().partition(" ")
        try:
            times[name] = float(value)
        except ValueError:
            continue
    return {
        "max_ui_stall_ms": float(found.group("all")),
        "max_ui_stall_after_ready_ms": float(found.group("ready")),
        "max_ui_stall_during_turns_ms": float(found.group("turns")),
        "turn_spans": int(found.group("spans")),
        "unix_times": times,
    }


# ---- the environment: X server and PulseAudio ----------------------------------------


class _Environment:
    """A display (DISPLAY, a private Xvfb, or none for offscreen) and, when possible, a
    private PulseAudio server with a virtual microphone."""

    def __init__(self, platform: str, want_audio: bool) -> None:
        self.platform = platform
        self.want_audio = want_audio
        self.display = ""
        self.display_note = "offscreen (no X server)"
        self.audio_note = "none (HANASU_NO_AUDIO=1)"
        self.pulse_env: dict[str, str] = {}
        self._xvfb: Xvfb | None = None
        self._pulse: Pulse | None = None

    def start(self) -> None:
        if self.platform == "xcb":
            if os.environ.get("DISPLAY"):
                self.display = os.environ["DISPLAY"]
                self.display_note = f"xcb on DISPLAY {self.display}"
            else:
                if shutil.which("Xvfb") is None:
                    raise RuntimeError(
                        "no DISPLAY and no Xvfb: install xvfb or use --platform offscreen"
                    )
                self._xvfb = Xvfb()
                self.display = self._xvfb.start()
                self.display_note = f"xcb on a private Xvfb {self.display} (1280x800x24)"
        if self.want_audio:
            missing = missing_tools()
            if missing:
                self.audio_note = f"none: needs {', '.join(missing)}"
                return
            self._pulse = Pulse()  # its own HANASU_PULSE_DIR, a fresh runtime folder
            self.pulse_env = self._pulse.start()
            self.audio_note = "PulseAudio null sinks (virtual microphone vmic, speaker spk)"

    @property
    def has_audio(self) -> bool:
        return bool(self.pulse_env)

    def app_env(self, folder: Path, exit_when_ready: bool) -> dict[str, str]:
        env = {
            **os.environ,
            **self.pulse_env,
            "QT_QPA_PLATFORM": self.platform,
            "HANASU_CONFIG_DIR": str(folder / "config"),
            "HANASU_DATA_DIR": str(folder / "data"),
            "HANASU_LOG_DIR": str(folder / "log"),
        }
        for name in ("HANASU_NO_AUDIO", "HANASU_EXIT_WHEN_READY"):
            env.pop(name, None)
        if self.display:
            env["DISPLAY"] = self.display
        if not self.has_audio:
            env["HANASU_NO_AUDIO"] = "1"
        if exit_when_ready:
            env["HANASU_EXIT_WHEN_READY"] = "1"
        return env

    def stop(self) -> None:
        if self._pulse is not None:
            self._pulse.stop()
            self._pulse = None
        if self._xvfb is not None:
            self._xvfb.stop()
            self._xvfb = None


def write_view_settings(folder: Path, pet: bool) -> None:
    """``--pet``: a settings file in the launch's config folder saying the app was left as
    the desktop pet. Without it there is no file, as on a first launch."""
    if pet:
        config = folder / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "settings.json").write_text(json.dumps({"version": 1, "pet_mode": True}))


def _app_command(fake: bool, verbose: bool) -> list[str]:
    command = [sys.executable, "-m", "app"]
    if verbose:
        command.append("-v")
    if fake:
        command.append("--fake-engines")
    return command


# ---- startup launches ----------------------------------------------------------------


def startup_launch(env: _Environment, fake: bool, folder: Path, timeout: float) -> dict[str, Any]:
    """One launch that quits when the engines are ready; times from before Popen."""
    log_path = folder / "stderr.log"
    with log_path.open("wb") as stderr:
        launched = time.time()
        proc = subprocess.Popen(
            _app_command(fake, verbose=False),
            cwd=ROOT,
            env=env.app_env(folder, exit_when_ready=True),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            code = stop_process(proc)
    text = _read(log_path)
    row: dict[str, Any] = {"exit_code": code}
    stalls = parse_stalls(text)
    if stalls is None:
        row["error"] = f"no timing line from the app:\n{text[-2000:]}"
        return row
    times = stalls["unix_times"]
    painted = times.get("painted", times.get("shown"))
    row["window_shown_s"] = _since(launched, times.get("shown"))
    row["window_visible_s"] = _since(launched, painted)
    row["engines_ready_s"] = _since(launched, times.get("ready"))
    row["startup_max_ui_stall_ms"] = stalls["max_ui_stall_ms"]
    found = re.search(r"window visible after (\d+) ms", text)
    if found:
        row["visible_after_run_app_s"] = int(found.group(1)) / 1000
    return row


def _since(start: float, moment: float | None) -> float | None:
    return None if moment is None else round(moment - start, 4)


# ---- the live launch -------------------------------------------------------------------


def _question_wav(folder: Path, index: int, text: str) -> Path:
    path = folder / f"q{index:02d}.wav"
    subprocess.run(
        ["espeak-ng", "-v", "en-us", "-s", "140", "-w", str(path), text],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return path


def room_noise_wav(folder: Path, dbfs: float, seconds: float, rate: int = 16_000) -> Path:
    """Pink noise (power falling 3 dB an octave, like a room and a cheap microphone's
    self-noise) at an RMS of ``dbfs``, seeded so every run hears the same floor."""
    import numpy as np
    import soundfile

    rng = np.random.default_rng(7)
    n = int(seconds * rate)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    spectrum /= np.sqrt(np.maximum(np.arange(spectrum.size), 1.0))
    noise = np.fft.irfft(spectrum, n)
    noise *= 10 ** (dbfs / 20) / float(np.sqrt(np.mean(np.square(noise))))
    path = folder / f"room-noise{dbfs:+.0f}dBFS.wav"
    soundfile.write(str(path), noise.astype(np.float32), rate, subtype="FLOAT")
    return path


def live_launch(env: _Environment, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Idle CPU while listening, then spoken turns, then SIGTERM and the stall report."""
    missing = [t for t in ("paplay", "espeak-ng") if shutil.which(t) is None]
    if not env.has_audio or missing:
        return {"skipped": f"needs audio ({env.audio_note}) and {', '.join(missing) or 'ok'}"}
    log_path = folder / "stderr.log"
    result: dict[str, Any] = {}
    launched = time.monotonic()
    with log_path.open("wb") as stderr:
        proc = subprocess.Popen(
            _app_command(args.fake_engines, verbose=True),
            cwd=ROOT,
            env=env.app_env(folder, exit_when_ready=False),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:

        def logged(pattern: str, count: int = 1) -> bool:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"the app exited ({proc.returncode}):\n{_read(log_path)[-3000:]}"
                )
            return len(re.findall(pattern, _read(log_path))) >= count

        if not _wait_until(lambda: logged(r"audio devices: Microphone"), args.timeout, 0.3):
            raise RuntimeError(
                f"engines/devices not up after {args.timeout:.0f} s:\n{_read(log_path)[-3000:]}"
            )
        result["devices_open_s"] = round(time.monotonic() - launched, 3)
        if args.pet and not logged(r"desktop pet shown"):
            raise RuntimeError("--pet: the app did not show the desktop pet")
        noise = None
        if args.room_noise is not None:  # under the settle time too: the level meter moves
            seconds = args.settle_seconds + args.idle_seconds + 5
            wav = room_noise_wav(folder, args.room_noise, seconds)
            noise = subprocess.Popen(["paplay", "-d", "micfeed", str(wav)])
            result["room_noise_dbfs"] = args.room_noise
        time.sleep(args.settle_seconds)
        result["load_average_before"] = round(os.getloadavg()[0], 2)
        threads_before = _thread_cpu(proc.pid)
        cpu_before, wall_before = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(args.idle_seconds)
        cpu_after, wall_after = cpu_seconds(proc.pid), time.monotonic()
        threads_after = _thread_cpu(proc.pid)
        if noise is not None:
            stop_process(noise)
        result["load_average_after"] = round(os.getloadavg()[0], 2)
        wall = wall_after - wall_before
        result["idle_seconds"] = round(wall, 2)
        result["idle_cpu_percent"] = round(100.0 * (cpu_after - cpu_before) / wall, 2)
        busiest = sorted(
            ((threads_after[k] - threads_before.get(k, 0.0), k) for k in threads_after),
            reverse=True,
        )[:6]
        result["idle_cpu_by_thread_percent"] = {
            name: round(100.0 * seconds / wall, 2) for seconds, name in busiest if seconds > 0
        }
        turns = []
        for index in range(max(0, args.questions)):
            question = QUESTIONS[index % len(QUESTIONS)]
            wav = _question_wav(folder, index, question)
            asked = time.monotonic()
            subprocess.run(
                ["paplay", "-d", "micfeed", str(wav)],
                env=env.app_env(folder, False),
                check=True,
                capture_output=True,
                timeout=60,
            )
            heard = _wait_until(partial(logged, r"user heard", index + 1), args.timeout, 0.3)
            turns.append(
                {
                    "question": question,
                    "replied": heard,
                    "reply_done_s": round(time.monotonic() - asked, 2),
                }
            )
            if not heard:
                break
            time.sleep(1.0)  # the tail of the reply and the return to idle
        result["turns"] = turns
    except Exception as exc:
        result["error"] = str(exc)
    finally:
        stopped = time.monotonic()
        result["exit_code"] = stop_process(proc)
        result["exit_after_sigterm_s"] = round(time.monotonic() - stopped, 2)
    stalls = parse_stalls(_read(log_path))
    if stalls is not None:
        stalls.pop("unix_times")
        result.update(stalls)
        said = re.findall(r"user said (.*)", _read(log_path))
        result["transcripts"] = [s.strip() for s in said]
    elif "error" not in result:
        result["error"] = f"no stall line at exit:\n{_read(log_path)[-3000:]}"
    return result


# ---- the report -----------------------------------------------------------------------


def _values(rows: list[dict[str, Any]], key: str) -> list[float]:
    return [float(r[key]) for r in rows if isinstance(r.get(key), int | float)]


def build_report(
    rows: list[dict[str, Any]],
    live: dict[str, Any],
    notes: dict[str, str],
) -> dict[str, Any]:
    report: dict[str, Any] = {"machine": machine_name(), **notes, "launches": rows}
    for key in ("window_visible_s", "window_shown_s", "engines_ready_s", "startup_max_ui_stall_ms"):
        values = _values(rows, key)
        if values:
            report[key] = summary(values)
    report["live"] = live
    targets: dict[str, Any] = {}
    visible = report.get("window_visible_s")
    if visible:
        targets["window visible < 1.5 s (p90)"] = visible["p90"] < WINDOW_VISIBLE_TARGET_S
    if isinstance(live.get("max_ui_stall_during_turns_ms"), float) and live.get("turns"):
        replied = all(t["replied"] for t in live["turns"])
        targets["UI stall during turns < 50 ms"] = (
            replied and live["max_ui_stall_during_turns_ms"] < TURN_STALL_TARGET_MS
        )
    if isinstance(live.get("idle_cpu_percent"), float):
        targets["idle CPU < 3 % of one core"] = live["idle_cpu_percent"] < IDLE_CPU_TARGET_PERCENT
    report["targets"] = targets
    return report


def _fmt(stats: dict[str, float] | None, unit: str, scale: float = 1.0, digits: int = 3) -> str:
    if not stats:
        return "n/a"
    median, p90 = stats["p50"] * scale, stats["p90"] * scale
    return f"median {median:.{digits}f} {unit}, p90 {p90:.{digits}f} {unit} (n={stats['n']:.0f})"


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"Hanasu UI benchmark on {report['machine']}",
        f"  engines: {report['engines']}; display: {report['display']}; audio: {report['audio']}",
        f"  view: {report.get('view', 'full window')}",
        f"  window visible (first paint, from before Popen): "
        f"{_fmt(report.get('window_visible_s'), 's')}",
        f"  window.show() returned:                          "
        f"{_fmt(report.get('window_shown_s'), 's')}",
        f"  engines ready (from before Popen):               "
        f"{_fmt(report.get('engines_ready_s'), 's', digits=2)}",
        f"  max UI stall during startup:                     "
        f"{_fmt(report.get('startup_max_ui_stall_ms'), 'ms', digits=1)}",
    ]
    for index, row in enumerate(report["launches"]):
        if "error" in row:
            lines.append(
                f"  launch {index + 1} failed (exit {row['exit_code']}): "
                f"{row['error'].splitlines()[0]}"
            )
    live = report["live"]
    if "skipped" in live:
        lines.append(f"  live launch skipped: {live['skipped']}")
    else:
        if "idle_cpu_percent" in live:
            threads = ", ".join(
                f"{k} {v:.1f}%" for k, v in live.get("idle_cpu_by_thread_percent", {}).items()
            )
            lines.append(
                f"  idle CPU while listening: {live['idle_cpu_percent']:.2f} % of one "
                f"core over {live['idle_seconds']:.1f} s, "
                + (f"room noise {live['room_noise_dbfs']:.0f} dBFS" if "room_noise_dbfs" in live
                   else "digitally silent microphone")
                + f" ({threads}); load average "
                f"{live.get('load_average_before')} before, {live.get('load_average_after')} "
                f"after, {os.cpu_count()} CPUs"
            )
        for turn in live.get("turns", []):
            state = "reply played" if turn["replied"] else "NO REPLY"
            lines.append(f"  turn {turn['question']!r}: {state} after {turn['reply_done_s']} s")
        if "max_ui_stall_during_turns_ms" in live:
            lines.append(
                f"  max UI stall: during turns {live['max_ui_stall_during_turns_ms']:.1f} ms "
                f"({live['turn_spans']} spans); after engines ready "
                f"{live['max_ui_stall_after_ready_ms']:.1f} ms; whole run "
                f"{live['max_ui_stall_ms']:.1f} ms"
            )
        if "error" in live:
            lines.append(f"  live launch error: {live['error'][:1500]}")
        lines.append(
            f"  live app exit code {live.get('exit_code')} "
            f"{live.get('exit_after_sigterm_s')} s after SIGTERM"
        )
    for name, ok in report["targets"].items():
        lines.append(f"  target {name}: {'PASS' if ok else 'MISS'}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    env = _Environment(args.platform, want_audio=True)
    rows: list[dict[str, Any]] = []
    live: dict[str, Any] = {"skipped": "--no-live"}
    try:
        env.start()
        with tempfile.TemporaryDirectory(prefix="hanasu-bench-ui-") as tmp:
            for index in range(max(0, args.launches)):
                folder = Path(tmp) / f"launch{index}"
                folder.mkdir()
                write_view_settings(folder, args.pet)
                row = startup_launch(env, args.fake_engines, folder, args.timeout)
                rows.append(row)
                visible = row.get("window_visible_s")
                ready = row.get("engines_ready_s")
                print(
                    f"launch {index + 1}: window visible "
                    f"{'?' if visible is None else f'{visible:.3f}'} s, engines ready "
                    f"{'?' if ready is None else f'{ready:.2f}'} s",
                    flush=True,
                )
            if not args.no_live:
                folder = Path(tmp) / "live"
                folder.mkdir()
                write_view_settings(folder, args.pet)
                live = live_launch(env, args, folder)
    finally:
        env.stop()
    engines = "fake" if args.fake_engines else "real (default models; fresh config/data/log dirs)"
    notes = {"engines": engines, "display": env.display_note, "audio": env.audio_note,
             "view": "desktop pet" if args.pet else "full window"}
    report = build_report(rows, live, notes)
    print(format_report(report), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=_json_default))
    failed = any("error" in r for r in rows) or "error" in live
    missed = not all(report["targets"].values())
    return 1 if failed or (args.check and missed) else 0


def _json_default(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)
