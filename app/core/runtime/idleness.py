"""Whether the pipeline is idle, published when it may have changed, so nobody polls it.

Idle means no speech in progress, no live turn, nothing queued, playing or being handled
on any thread. Each thread that can be the last to finish its part (every stage after a
job, the controller after a message, the telemetry hub after an event, the listener when
a voice ends) calls ``changed()``; waiters (``hanasu run`` waiting for the last reply, the
memory pass waiting for a quiet moment) block in ``wait_idle`` until idleness has held
long enough, and are woken by the next change instead of asking every 50 ms.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class IdleSignal:
    def __init__(self, is_idle: Callable[[], bool], now: Callable[[], float]) -> None:
        self._is_idle = is_idle
        self._now = now
        self._cond = threading.Condition()
        self._idle_since: float | None = None
        self.changes = 0
        """Times a thread reported a change (tests, diagnostics)."""

    def changed(self) -> None:
        """Something idleness depends on may have changed (any thread but the audio
        callbacks): look again and wake the waiters if the answer moved."""
        with self._cond:  # looked at under the lock: two threads cannot publish out of order
            idle = self._is_idle()
            self.changes += 1
            if idle == (self._idle_since is not None):
                return
            self._idle_since = self._now() if idle else None
            self._cond.notify_all()

    def idle_for(self) -> float:
        """Seconds idle so far (0.0 while busy)."""
        with self._cond:
            since = self._idle_since
        return 0.0 if since is None else max(0.0, self._now() - since)

    def wait_idle(self, settle_s: float, timeout_s: float,
                  give_up: threading.Event | None = None) -> bool:
        """Block until the pipeline has been idle for ``settle_s``; False after
        ``timeout_s`` or once ``give_up`` is set (checked at every wake-up)."""
        self.changed()  # the state before the first change is unknown
        deadline = self._now() + timeout_s
        with self._cond:
            while give_up is None or not give_up.is_set():
                now = self._now()
                if self._idle_since is not None and now - self._idle_since >= settle_s:
                    return True
                if now >= deadline:
                    return False
                until = deadline if self._idle_since is None else min(
                    deadline, self._idle_since + settle_s)
                wait = until - now
                self._cond.wait(min(wait, 0.5) if give_up is not None else wait)
        return False

    def wake(self) -> None:
        """Wake the waiters to look at their ``give_up`` at once."""
        with self._cond:
            self._cond.notify_all()
