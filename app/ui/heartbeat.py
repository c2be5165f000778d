"""Measures how responsive the GUI thread is: the worst lateness of a 25 ms timer tick
(fine enough for a 50 ms target, and cheap enough to leave on: a 10 ms tick cost ~1% of a core).
Outside busy spans (listening in silence) it ticks every 100 ms instead, which still sees any
stall longer than ~100 ms there (a shorter one may fall between two ticks) and costs a
quarter of the wake-ups; entering a busy span switches back to 25 ms at once.

If anything blocks the event loop (a slow paint, a model load on the wrong thread), the
next tick arrives late by that much; the maximum is the UI stall the user would feel.

Besides the maximum over the whole run it keeps two narrower ones for ``hanasu bench
--ui``: since the last ``mark()`` (the app marks when the engines are ready) and inside
busy spans (``set_busy``: the app is busy from the user's first word until it is idle
again, i.e. during turns). A tick that ends a span still counts for it, so the work done
when a turn ends (transcript, HUD) is part of the turn.
"""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import QObject, Qt, QTimer

INTERVAL_MS = 25
IDLE_INTERVAL_MS = 100
"""Tick outside busy spans."""
REPORT_MS = 50
"""Stalls longer than this are logged (debug), to find what blocked the event loop."""

log = logging.getLogger(__name__)


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
        self._busy = False
        self._busy_tick = False
        self._last: float | None = None
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
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def reset(self) -> None:
        self.max_stall_ms = 0.0
        self.max_since_mark_ms = 0.0
        self.max_busy_stall_ms = 0.0
        self.busy_spans = 0
        self.long_stalls = 0
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
        if self._last is not None:
            late = (now - self._last) * 1000.0 - interval
            if late > REPORT_MS:
                self.long_stalls += 1
                log.debug("GUI thread stalled %.0f ms", late)
            self.max_stall_ms = max(self.max_stall_ms, late)
            self.max_since_mark_ms = max(self.max_since_mark_ms, late)
            if self._busy_tick:
                self.max_busy_stall_ms = max(self.max_busy_stall_ms, late)
        self._busy_tick = self._busy
        self._last = now
        self.ticks += 1
