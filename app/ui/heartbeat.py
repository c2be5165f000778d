"""Measures how responsive the GUI thread is: the worst lateness of a 10 ms timer tick.

If anything blocks the event loop (a slow paint, a model load on the wrong thread), the
next tick arrives late by that much; the maximum is the UI stall the user would feel.
"""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import QObject, Qt, QTimer

INTERVAL_MS = 10
REPORT_MS = 50
"""Stalls longer than this are logged (debug), to find what blocked the event loop."""

log = logging.getLogger(__name__)


class StallMonitor(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.max_stall_ms = 0.0
        self.ticks = 0
        self._last: float | None = None
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = None
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def reset(self) -> None:
        self.max_stall_ms = 0.0
        self._last = None

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._last is not None:
            late = (now - self._last) * 1000.0 - INTERVAL_MS
            if late > REPORT_MS:
                log.debug("GUI thread stalled %.0f ms", late)
            self.max_stall_ms = max(self.max_stall_ms, late)
        self._last = now
        self.ticks += 1
