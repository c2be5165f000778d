"""Trouble counted on PortAudio's real-time threads, and logged from elsewhere.

A callback may not log (logging takes locks and may write to a disk): it only adds one to
a counter that it alone writes. The watchdog thread logs what changed, at most once a
second, so a failing device cannot flood the log.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeviceCounters:
    """A snapshot of the trouble so far (read them for metrics and tests)."""

    queue_overflows: int
    """Captured blocks dropped because the capture ring was full (its reader fell behind)."""
    input_overflows: int
    """Blocks PortAudio reported as overflowed (Python was too slow to be called)."""
    output_underflows: int
    pull_errors: int
    push_errors: int
    reopens: int


class CallbackTrouble:
    """Each counter is written by one thread only (a callback, the forwarder or the
    watchdog) and read by any."""

    _NAMES = ("queue overflows", "input overflows", "output underflows", "pull errors",
              "push errors")

    def __init__(self) -> None:
        self.queue_overflows = 0
        self.input_overflows = 0
        self.output_underflows = 0
        self.pull_errors = 0
        self.push_errors = 0
        self.reopens = 0
        self._logged = (0, 0, 0, 0, 0)
        self._logged_at = 0.0

    def snapshot(self) -> DeviceCounters:
        return DeviceCounters(self.queue_overflows, self.input_overflows,
                              self.output_underflows, self.pull_errors, self.push_errors,
                              self.reopens)

    def log_changes(self) -> None:
        """From the watchdog: one warning line for what grew, at most once a second."""
        now = time.monotonic()
        if now - self._logged_at < 1.0:
            return
        current = (self.queue_overflows, self.input_overflows, self.output_underflows,
                   self.pull_errors, self.push_errors)
        if current != self._logged:
            changes = [f"{name} +{new - old}" for name, new, old
                       in zip(self._NAMES, current, self._logged, strict=True) if new != old]
            log.warning("audio trouble in the last second: %s", ", ".join(changes))
            self._logged = current
            self._logged_at = now
