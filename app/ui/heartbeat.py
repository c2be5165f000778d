"""Measures how responsive the GUI thread is: the worst lateness of a 25 ms timer tick
(fine enough for a 50 ms target, and cheap enough to leave on: a 10 ms tick cost ~1% of a core).
Outside busy spans (listening in silence) it ticks every 250 ms instead, which still sees any
stall longer than ~250 ms there (a shorter one may fall between two ticks: nobody is waiting
on the window then) and costs a tenth of the wake-ups; entering a busy span switches back to
25 ms at once.

If anything blocks the event loop (a slow paint, a model load on the wrong thread), the
next tick arrives late by that much; the maximum is the UI stall the user would feel.

Besides the maximum over the whole run it keeps two narrower ones for ``hanasu bench
--ui``: since the last ``mark()`` (the app marks when the engines are ready) and inside
busy spans (``set_busy``: the app is busy from the user's first word until it is idle
again, i.e. during turns). A tick that ends a span still counts for it, so the work done
when a turn ends (transcript, HUD) is part of the turn.

To tell *what* stalled, it keeps the ``WORST_KEPT`` worst late ticks as ``Stall`` records:
how much CPU the GUI thread itself used in the gap (``time.thread_time``: near the gap, the
GUI thread was working; near zero, it was waiting for the GIL or for a CPU), how long
Python's garbage collector ran in it (with ``track_gc()``: a ``gc.callbacks`` hook, off
by default) and the labels code ``note()``d on the GUI thread since the previous tick.
With ``track_gc()`` on it also reads, at every tick, how long each of the process's
threads waited for a CPU (Linux ``/proc/self/task/*/schedstat``, the run-queue delay; a
dozen small reads a tick, for benchmarks only). On a machine with more runnable threads
than cores the OS alone makes ticks late: directly (the GUI thread waits for a core) or
through the GIL (the thread holding it was preempted, and the GUI thread sleeps until it
runs again). ``app_late_ms``, the lateness less the longest such wait of any thread in the
gap, is what the app itself is answerable for.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer

INTERVAL_MS = 25
IDLE_INTERVAL_MS = 250
"""Tick outside busy spans."""
REPORT_MS = 50
"""Stalls longer than this are logged (debug), to find what blocked the event loop."""

WORST_KEPT = 5
NOTES_KEPT = 6
"""Labels kept per gap (the first ones: what started the gap matters most)."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Stall:
    """One late tick, with what the GUI thread and the collector did in the gap."""

    late_ms: float
    at_s: float
    """Seconds since the monitor started (``time.perf_counter`` based)."""
    busy: bool
    gui_cpu_ms: float
    """CPU time of the GUI thread over the whole gap (interval + lateness)."""
    process_cpu_ms: float
    """CPU time of the whole process (all threads) over the gap: well under the gap, the
    process was not running at all (the machine is busy); near or over it, other threads
    of the app kept the GIL."""
    gc_ms: float
    """Time spent in garbage collection in the gap, any thread (``track_gc``)."""
    gc_counts: tuple[int, int, int] = (0, 0, 0)
    """Collections of generation 0, 1 and 2 in the gap."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    cpu_wait_ms: float | None = None
    """The longest wait for a CPU (run queue) of any of the process's threads in the gap
    (None: not read)."""
    waiting_thread: str = ""
    """Which thread waited that long (its kernel name and id)."""

    @property
    def app_late_ms(self) -> float:
        """The lateness less the longest wait for a CPU in the gap (the OS's share)."""
        return max(0.0, self.late_ms - (self.cpu_wait_ms or 0.0))

    def describe(self) -> str:
        runs = ", ".join(f"gen{g} x{n}" for g, n in enumerate(self.gc_counts) if n)
        gc_part = f", gc {self.gc_ms:.0f} ms ({runs})" if runs else ""
        notes = f"; during: {', '.join(self.notes)}" if self.notes else ""
        wait = ("" if self.cpu_wait_ms is None
                else f", longest wait for a CPU {self.cpu_wait_ms:.0f} ms "
                     f"({self.waiting_thread})")
        return (f"{self.late_ms:.0f} ms late at {self.at_s:.1f} s: CPU GUI thread "
                f"{self.gui_cpu_ms:.0f} ms, process {self.process_cpu_ms:.0f} ms{wait}"
                f"{gc_part}{notes}")


def run_queue_waits() -> dict[str, float]:
    """Seconds each thread of this process has spent runnable but not running, keyed
    "name/tid" (Linux; empty elsewhere)."""
    waits: dict[str, float] = {}
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return waits
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/schedstat", encoding="ascii") as stat:
                waited = int(stat.read().split()[1]) / 1e9
            with open(f"/proc/self/task/{task}/comm", encoding="utf-8") as comm:
                name = comm.read().strip()
        except (OSError, IndexError, ValueError):
            continue  # the thread ended
        waits[f"{name}/{task}"] = waited
    return waits


class StallMonitor(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.max_stall_ms = 0.0
        self.ticks = 0
        self.max_since_mark_ms = 0.0
        self.max_busy_stall_ms = 0.0
        self.busy_spans = 0
        self.long_stalls = 0
        """Ticks later than ``REPORT_MS`` (how often, not only how bad)."""
        self.worst: list[Stall] = []
        """The ``WORST_KEPT`` latest ticks so far, worst first."""
        self._busy = False
        self._busy_tick = False
        self._last: float | None = None
        self._last_cpu = 0.0
        self._last_process_cpu = 0.0
        self._started = time.perf_counter()
        self._notes: list[str] = []
        self._gc_ms = 0.0
        self._gc_counts = [0, 0, 0]
        self._gc_began: float | None = None
        self._tracking_gc = False
        self._last_waits: dict[str, float] = {}
        self.gc_collections = [0, 0, 0]
        """Collections per generation since ``track_gc()`` (any thread)."""
        self.gc_longest_ms = [0.0, 0.0, 0.0]
        self.max_app_stall_ms = 0.0
        """The worst ``Stall.app_late_ms`` (with ``track_gc``; else the plain lateness)."""
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(IDLE_INTERVAL_MS)
        self._timer.timeout.connect(self._tick)

    @property
    def interval_ms(self) -> int:
        return self._timer.interval()

    def _set_interval(self, interval: int) -> None:
        if self._timer.interval() != interval:
            self._timer.setInterval(interval)  # restarts the timer: count from now
            if self._last is not None:
                self._last = time.perf_counter()

    def start(self) -> None:
        self._last = None
        self._started = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self.track_gc(False)

    def note(self, label: str) -> None:
        """What the GUI thread is about to do (GUI thread; cheap): a late tick lists the
        labels noted since the previous tick."""
        if len(self._notes) < NOTES_KEPT:
            self._notes.append(label)

    def track_gc(self, on: bool = True) -> None:
        """Time the garbage collector (a ``gc.callbacks`` hook; for benchmarks)."""
        if on and not self._tracking_gc:
            gc.callbacks.append(self._on_gc)
        elif not on and self._tracking_gc:
            gc.callbacks.remove(self._on_gc)
        self._tracking_gc = on

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        # Runs on whichever thread collects, holding the GIL: nothing else runs meanwhile.
        if phase == "start":
            self._gc_began = time.perf_counter()
        elif self._gc_began is not None:
            took = (time.perf_counter() - self._gc_began) * 1000.0
            self._gc_ms += took
            self._gc_began = None
            generation = int(info.get("generation", 0))
            if 0 <= generation <= 2:
                self._gc_counts[generation] += 1
                self.gc_collections[generation] += 1
                self.gc_longest_ms[generation] = max(self.gc_longest_ms[generation], took)

    def reset(self) -> None:
        self.max_stall_ms = 0.0
        self.max_since_mark_ms = 0.0
        self.max_busy_stall_ms = 0.0
        self.busy_spans = 0
        self.long_stalls = 0
        self.worst = []
        self.max_app_stall_ms = 0.0
        self.gc_collections = [0, 0, 0]
        self.gc_longest_ms = [0.0, 0.0, 0.0]
        self._last = None

    def mark(self) -> None:
        """Start ``max_since_mark_ms`` afresh (the whole-run maximum is kept)."""
        self.max_since_mark_ms = 0.0

    def set_busy(self, busy: bool) -> None:
        """Enter or leave a busy span (a turn); stalls inside spans go to ``max_busy_stall_ms``."""
        if busy and not self._busy:
            self.busy_spans += 1
        self._busy = busy
        self._busy_tick = self._busy_tick or busy
        if busy:
            self._set_interval(INTERVAL_MS)

    def _tick(self) -> None:
        self._measure(self._timer.interval())
        if not self._busy:  # a span's last tick ran at the busy pace; slow down after it
            self._set_interval(IDLE_INTERVAL_MS)

    def _measure(self, interval: int) -> None:
        now = time.perf_counter()
        cpu = time.thread_time()
        process_cpu = time.process_time()
        waits = run_queue_waits() if self._tracking_gc else {}
        if self._last is not None:
            late = (now - self._last) * 1000.0 - interval
            if late > REPORT_MS:
                self.long_stalls += 1
                log.debug("GUI thread stalled %.0f ms", late)
            self.max_stall_ms = max(self.max_stall_ms, late)
            self.max_since_mark_ms = max(self.max_since_mark_ms, late)
            if self._busy_tick:
                self.max_busy_stall_ms = max(self.max_busy_stall_ms, late)
            wait_ms, waiting = None, ""
            if waits and self._last_waits:
                waited, waiting = max((seconds - self._last_waits.get(name, seconds), name)
                                      for name, seconds in waits.items())
                wait_ms = waited * 1000.0
            self.max_app_stall_ms = max(self.max_app_stall_ms, late - (wait_ms or 0.0))
            if len(self.worst) < WORST_KEPT or late > self.worst[-1].late_ms:
                self._keep(Stall(late, now - self._started, self._busy_tick,
                                 (cpu - self._last_cpu) * 1000.0,
                                 (process_cpu - self._last_process_cpu) * 1000.0, self._gc_ms,
                                 (self._gc_counts[0], self._gc_counts[1], self._gc_counts[2]),
                                 tuple(self._notes), wait_ms, waiting))
        self._notes.clear()
        self._gc_ms = 0.0
        self._gc_counts = [0, 0, 0]
        self._busy_tick = self._busy
        self._last = now
        self._last_cpu = cpu
        self._last_process_cpu = process_cpu
        self._last_waits = waits
        self.ticks += 1

    def _keep(self, stall: Stall) -> None:
        self.worst.append(stall)
        self.worst.sort(key=lambda s: s.late_ms, reverse=True)
        del self.worst[WORST_KEPT:]
