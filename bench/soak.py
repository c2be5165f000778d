"""``hanasu bench soak``: a long evening of turns on the real window, faster than real time.

Targets (issue 7): over 1,000 turns with scripted speech, barge-ins and persona switches
the process's resident memory grows < 5 % after warm-up, and the GUI thread never stalls
> 50 ms.

The real ``MainWindow`` (offscreen Qt unless ``QT_QPA_PLATFORM`` says otherwise, fresh
config/data/log folders) runs a ``VoicePipeline`` on the fake engines (energy VAD, fixed
transcript and reply, a tone for speech), wired the way the app wires it. On the GUI
thread a driver plays the user: a "microphone" timer pushes a tone and silence in 32 ms
blocks as fast as the listener takes them (it keeps the listener's inbox short, so no
block is dropped), and a "speaker" timer pulls the reply at ``--speed`` x real time.
Every ``--barge-in-every``-th turn the user talks over the reply once it has played for
a while (the speaker runs at real time then, so the reply was heard); every
``--persona-every``-th turn the persona is switched in the sidebar first. A turn is done
when its reply has ended (played out or interrupted).

Memory is the resident set from ``/proc/self/statm`` after a ``gc.collect()``: at the
start, after the warm-up turns (caches, first paints, allocator pools) and at the end;
growth is end vs warm-up. The GUI stall is the heartbeat's (``app/ui/heartbeat.py``) worst
late tick over the whole soak, kept at its 25 ms busy pace. The report lists the worst
late ticks with what happened in them (the GUI thread's and the process's CPU time, the
GUI thread's wait for a CPU, garbage collections, the events drained and the driver's
actions), and the worst lateness less the GUI thread's wait for a CPU: on a machine with
more runnable threads than cores the OS alone delays a tick by 100-200 ms, which says
nothing about the app. The sizes of the containers
that grow with the conversation are reported too, to tell a leak from history.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from app.core.pipeline import VoicePipeline
    from app.ui.window import MainWindow

RSS_GROWTH_TARGET_PERCENT = 5.0
STALL_TARGET_MS = 50.0
RATE = 16_000
BLOCK = 512
"""Microphone block: 32 ms at 16 kHz, as the capture callback hands them in."""
REPLY = "Sure, that sounds lovely. Tell me more about it."
TICK_MS = 5
"""The driver's, microphone's and speaker's timer (faster than the 32 ms a device gives)."""
MIC_BACKLOG_BLOCKS = 4
"""Blocks allowed to wait in the listener's microphone ring (its bound drops blocks beyond it)."""
BARGE_AFTER_S = 0.6
"""A barge-in comes after this much of the reply has played (real time)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=1000, help="turns to run (default 1000)")
    parser.add_argument("--warmup", type=int, default=100,
                        help="turns before the warm-up memory sample (default 100: the "
                        "allocator and caches still grow ~4 %% over the first 100)")
    parser.add_argument("--barge-in-every", type=int, default=7,
                        help="every Nth turn the user talks over the reply (0: never)")
    parser.add_argument("--persona-every", type=int, default=25,
                        help="every Nth turn the persona is switched first (0: never)")
    parser.add_argument("--speed", type=float, default=10.0,
                        help="speaker pull speed, x real time (default 10)")
    parser.add_argument("--turn-timeout", type=float, default=30.0,
                        help="seconds one turn may take before the soak stops (default 30)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, help="write the report here")


def rss_bytes(collect: bool = True) -> int:
    """Resident set size of this process (``/proc/self/statm``), after a full GC unless
    ``collect`` is off (a full GC on the GUI thread is itself a stall of tens of ms)."""
    if collect:
        gc.collect()
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _language_model() -> Any:
    """The fake LLM, less its test log: it keeps every prompt it was given (``prompts``,
    ~36 messages a turn late in a conversation) for tests to read, which an evening of
    turns would count as the app's memory."""
    from app.adapters.fakes import FakeLanguageModel

    class Forgetful(FakeLanguageModel):
        def stream(self, messages: Any, cancelled: Any, on_prompt: Any = None) -> Any:
            self.prompts.clear()
            return super().stream(messages, cancelled, on_prompt)

    return Forgetful(reply=REPLY)


def _utterance(seconds: float) -> np.ndarray:
    """A 200 Hz tone (the fake VAD is energy based) with silence around it."""
    t = np.arange(int(seconds * RATE), dtype=np.float32) / RATE
    speech = (0.3 * np.sin(2 * np.pi * 200.0 * t)).astype(np.float32)
    return np.concatenate([np.zeros(RATE // 5, np.float32), speech,
                           np.zeros(int(1.2 * RATE), np.float32)])


class _Driver:
    """Plays the user on the GUI thread; ``done`` when the turns are over or it is stuck."""

    def __init__(self, window: MainWindow, pipeline: VoicePipeline, args: argparse.Namespace,
                 on_warm: Any) -> None:
        from PySide6.QtCore import QTimer

        self.window, self.pipeline, self.args = window, pipeline, args
        self.on_warm = on_warm
        self.turns_done = 0
        self.barge_ins = 0
        self.persona_switches = 0
        self.interrupted = 0
        self.error = ""
        self.done = False
        self._mic: np.ndarray = np.zeros(0, np.float32)
        self._mic_at = 0
        self._waiting = False  # a reply is due
        self._barge_planned = False
        self._playing_since: float | None = None
        self._real_time = False
        self._deadline = 0.0
        self._last_turn_id = -1
        self._frames_per_tick = int(pipeline.engines.tts.sample_rate * TICK_MS / 1000)
        bridge = window.bridge
        bridge.playback_started.connect(self._on_started)
        bridge.playback_ended.connect(self._on_ended)
        self._timer = QTimer()
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    # ---- events -----------------------------------------------------------------------

    def _on_started(self, turn_id: int, _at: float) -> None:
        self._playing_since = time.monotonic()
        self._last_turn_id = turn_id

    def _on_ended(self, _turn_id: int, _heard: str, interrupted: bool) -> None:
        self._playing_since = None
        self._real_time = False
        self.turns_done += 1
        self.interrupted += int(interrupted)
        if self.turns_done == self.args.warmup:
            self.on_warm()
        if self.turns_done % 100 == 0:
            rss = rss_bytes(collect=False)
            print(f"soak: {self.turns_done} turns, RSS {rss / 2**20:.1f} MiB",
                  file=sys.stderr, flush=True)
        if not self._barge_planned or interrupted:
            self._waiting = False
            self._barge_planned = False

    # ---- the loop -----------------------------------------------------------------------

    def _tick(self) -> None:
        if self.done:
            return
        self._feed_mic()
        self._pull_speaker()
        now = time.monotonic()
        if self.turns_done >= self.args.turns:
            self._finish()
        elif self._waiting:
            if now > self._deadline:
                self._finish(f"turn {self.turns_done + 1} took over {self.args.turn_timeout} s "
                             f"(state {self.window.pipeline_state.value})")
            elif (self._barge_planned and self._playing_since is not None
                  and now - self._playing_since >= BARGE_AFTER_S and self._mic_idle()):
                self._barge_planned = False
                self.barge_ins += 1
                self._say(0.6)  # talks over the reply; it becomes the next turn
        elif self._mic_idle() and self._quiet():
            self._next_turn()

    def _next_turn(self) -> None:
        number = self.turns_done + 1
        every = self.args.persona_every
        if every and number > 1 and number % every == 0:
            self._switch_persona()
        every = self.args.barge_in_every
        self._barge_planned = bool(every) and number % every == 0
        self._real_time = self._barge_planned
        self._waiting = True
        self._deadline = time.monotonic() + self.args.turn_timeout
        self._say(0.8)

    def _say(self, seconds: float) -> None:
        self.window.stall.note(f"user speaks {seconds:.1f} s")
        self._mic = _utterance(seconds)
        self._mic_at = 0

    def _mic_idle(self) -> bool:
        return self._mic_at >= self._mic.size

    def _quiet(self) -> bool:
        from app.core.events import AssistantState

        return (self.window.pipeline_state is AssistantState.IDLE
                and not self.pipeline.playback.speaking)

    def _feed_mic(self) -> None:
        mic = self.pipeline.listener.mic
        while not self._mic_idle() and mic.backlog_blocks() < MIC_BACKLOG_BLOCKS:
            self.pipeline.push_audio(self._mic[self._mic_at:self._mic_at + BLOCK])
            self._mic_at += BLOCK

    def _pull_speaker(self) -> None:
        speed = 1.0 if self._real_time else self.args.speed
        self.pipeline.pull_audio(max(1, int(self._frames_per_tick * speed)))

    def _switch_persona(self) -> None:
        personas = self.window.library.personas
        index = next((i for i, p in enumerate(personas) if p.id == self.window.persona.id), 0)
        self.window.stall.note("persona switch")
        self.window.sidebar.select(personas[(index + 1) % len(personas)].id)
        self.persona_switches += 1

    def _finish(self, error: str = "") -> None:
        self.error = error
        self.done = True
        self._timer.stop()


def _sizes(window: MainWindow, pipeline: VoicePipeline) -> dict[str, int]:
    """Containers that grow with the conversation (a leak shows up as one growing per turn)."""
    from PySide6.QtWidgets import QWidget

    sizes = {
        "python_objects": len(gc.get_objects()),
        "qt_widgets": len(window.findChildren(QWidget)),
        "transcript_turns": len(window.transcript.model.turns),
        "recorder_turns": len(pipeline.recorder.turns),
        "conversation_exchanges": len(pipeline.machine.conversation.exchanges),
        "states_seen": len(window.states_seen),
    }
    return sizes


def _qt_message(_mode: object, _context: object, message: str) -> None:
    """Qt's messages to stderr, less the offscreen plugin's one per window resize."""
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)


def _type_counts() -> Counter[str]:
    return Counter(type(o).__name__ for o in gc.get_objects())


def _growing_types(before: Counter[str], after: Counter[str], top: int = 8) -> dict[str, int]:
    """The object types whose count grew most (where a leak would show)."""
    grown = after - before
    return dict(grown.most_common(top))


def run_soak(args: argparse.Namespace) -> dict[str, Any]:
    """Run the soak in this process (Qt must not be running yet); the report."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["HANASU_NO_AUDIO"] = "1"
    from app.ui.serial_paint import paint_serially

    paint_serially()  # as run_app does, before the QApplication
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    from app.adapters.fakes import (
        FakeRecognizer,
        FakeSynthesizer,
        FakeVoiceActivity,
    )
    from app.core.pipeline import Engines, VoicePipeline
    from app.personas.loader import load_personas
    from app.storage.settings import Settings
    from app.ui.gc_freeze import freeze_startup_objects
    from app.ui.theme import apply_theme
    from app.ui.window import MainWindow

    previous_handler = qInstallMessageHandler(_qt_message)
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    apply_theme(app)
    report: dict[str, Any] = {"turns_wanted": args.turns, "rss_start_bytes": rss_bytes(),
                              "load_average_start": round(os.getloadavg()[0], 2)}
    window = MainWindow(load_personas(), Settings(speak_greeting=False))
    window.show()
    pipeline = VoicePipeline(
        Engines(FakeVoiceActivity(), FakeRecognizer(), _language_model(),
                FakeSynthesizer()),
        window.persona.full_system_prompt(),
    )
    pipeline.add_observer(window.bridge.post)
    pipeline.start()
    window.attach_pipeline(pipeline)
    freeze_startup_objects()  # as run_app does once the engines are ready
    window.stall.set_busy(True)  # the 25 ms pace throughout: every stall counts
    window.stall.track_gc()  # the worst stalls say how long the collector ran in them
    window.bridge.any_event.connect(lambda event: window.stall.note(type(event).__name__))

    types_warm: Counter[str] = Counter()

    def warm() -> None:
        report["rss_warm_bytes"] = rss_bytes()
        report["sizes_warm"] = _sizes(window, pipeline)
        types_warm.update(_type_counts())
        window.stall.reset()  # stalls from here on (startup is bench ui's business)

    driver = _Driver(window, pipeline, args, warm)
    started = time.monotonic()
    driver.start()
    try:
        while not driver.done:
            app.processEvents()
            time.sleep(0.001)
    finally:
        driver.stop()
        report["seconds"] = round(time.monotonic() - started, 1)
        report["max_gui_stall_ms"] = round(window.stall.max_stall_ms, 1)
        report["gui_stalls_over_50_ms"] = window.stall.long_stalls
        report["worst_gui_stalls"] = [stall.describe() for stall in window.stall.worst]
        report["max_gui_stall_less_cpu_wait_ms"] = round(window.stall.max_app_stall_ms, 1)
        report["gc_collections"] = list(window.stall.gc_collections)
        report["gc_longest_ms"] = [round(ms, 1) for ms in window.stall.gc_longest_ms]
        window.stall.track_gc(False)  # the collections below are the bench's own
        report["sizes_end"] = _sizes(window, pipeline)
        report["rss_end_bytes"] = rss_bytes()
        report["growing_types"] = _growing_types(types_warm, _type_counts())
        report["load_average_end"] = round(os.getloadavg()[0], 2)
        window.detach_pipeline()
        pipeline.stop()
        window.shutdown()
        window.close()
        qInstallMessageHandler(previous_handler)
        gc.unfreeze()  # an in-process caller (the tests) gets its collector back as it was
    report.update(turns_done=driver.turns_done, barge_ins=driver.barge_ins,
                  interrupted=driver.interrupted, persona_switches=driver.persona_switches,
                  dropped_mic_blocks=pipeline.dropped_mic_blocks)
    if driver.error:
        report["error"] = driver.error
    warm_rss = report.get("rss_warm_bytes")
    if warm_rss:
        report["rss_growth_percent"] = round(
            100.0 * (report["rss_end_bytes"] - warm_rss) / warm_rss, 2)
    report["targets"] = {
        "all turns done": driver.turns_done >= args.turns and not driver.error,
        "RSS growth < 5 % after warm-up": (
            report.get("rss_growth_percent", float("inf")) < RSS_GROWTH_TARGET_PERCENT),
        "GUI stall < 50 ms": report["max_gui_stall_ms"] < STALL_TARGET_MS,
        "GUI stall less CPU wait < 50 ms": (
            report["max_gui_stall_less_cpu_wait_ms"] < STALL_TARGET_MS),
    }
    return report


def format_report(report: dict[str, Any]) -> str:
    mib = 1024 * 1024
    lines = [
        f"Hanasu soak: {report['turns_done']}/{report['turns_wanted']} turns in "
        f"{report['seconds']} s ({report['barge_ins']} barge-ins, {report['interrupted']} "
        f"replies interrupted, {report['persona_switches']} persona switches, "
        f"{report['dropped_mic_blocks']} mic blocks dropped)",
        f"  RSS: start {report['rss_start_bytes'] / mib:.1f} MiB, after warm-up "
        f"{report.get('rss_warm_bytes', 0) / mib:.1f} MiB, end "
        f"{report['rss_end_bytes'] / mib:.1f} MiB "
        f"(growth {report.get('rss_growth_percent', float('nan')):.2f} %)",
        f"  max GUI stall after warm-up: {report['max_gui_stall_ms']:.1f} ms, "
        f"{report['gui_stalls_over_50_ms']} ticks late by > 50 ms (load average "
        f"{report['load_average_start']} at the start, {report['load_average_end']} at the end, "
        f"{os.cpu_count()} CPUs: above the CPU count, the OS stalls the thread too)",
        *(f"    {stall}" for stall in report.get("worst_gui_stalls", [])),
        f"  max GUI stall less the longest wait for a CPU of any thread in its gap: "
        f"{report.get('max_gui_stall_less_cpu_wait_ms', float('nan')):.1f} ms",
        f"  garbage collections after warm-up (gen 0/1/2): {report.get('gc_collections')}, "
        f"longest {report.get('gc_longest_ms')} ms",
        f"  sizes after warm-up: {report.get('sizes_warm')}",
        f"  sizes at the end:    {report['sizes_end']}",
        f"  object types grown most since warm-up: {report['growing_types']}",
    ]
    if "error" in report:
        lines.append(f"  stopped: {report['error']}")
    for name, ok in report["targets"].items():
        lines.append(f"  target {name}: {'PASS' if ok else 'MISS'}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="hanasu-soak-") as tmp:
        for name, sub in (("HANASU_CONFIG_DIR", "config"), ("HANASU_DATA_DIR", "data"),
                          ("HANASU_LOG_DIR", "log")):
            os.environ[name] = str(Path(tmp) / sub)
        report = run_soak(args)
    print(format_report(report), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    if "error" in report:
        return 1
    return 1 if args.check and not all(report["targets"].values()) else 0
