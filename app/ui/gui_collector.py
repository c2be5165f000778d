"""Python's cyclic garbage collector, run on the GUI thread only.

The collector runs on whichever thread happens to allocate when a generation fills up:
a pipeline stage, the history writer, the audio forwarder. A Qt object caught in a
reference cycle (a widget and the closure of a slot connected to it) is then deleted on
that thread, and Qt, which needs its objects deleted on their own thread, crashes later,
somewhere else. The UI tests crashed this way (tests/ui/conftest.py does the same there).

So the automatic collector is switched off and this timer does its work on the GUI
thread, with the collector's own rule: a collection of the youngest generation once
enough objects were allocated, an older one once enough younger ones ran. A check is a
call to ``gc.get_count`` twice a second; start-up's objects are frozen out of full
collections (``gc_freeze``), so one stays short.
"""

from __future__ import annotations

import gc
import logging
import time

from PySide6.QtCore import QObject, QTimer

log = logging.getLogger(__name__)

CHECK_MS = 500
"""How often the GUI thread looks at the allocation counts (two wake-ups a second)."""


def generation_due() -> int | None:
    """The generation the automatic collector would collect now (None: none yet)."""
    young, middle, old = gc.get_count()
    first, second, third = gc.get_threshold()
    if first <= 0 or young < first:
        return None
    if middle < second:
        return 0
    return 2 if old >= third else 1


class GuiThreadCollector(QObject):
    """Owns the cyclic collector while it lives; ``stop`` gives it back as it was."""

    def __init__(self, parent: QObject | None = None, check_ms: int = CHECK_MS) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        self.collections = 0
        self.longest_ms = 0.0
        """The longest collection so far: what the GUI thread stalled for it."""
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.tick)
        self._timer.start(check_ms)

    def tick(self) -> int | None:
        """Collect the generation that is due, if any; which one it was."""
        generation = generation_due()
        if generation is None:
            return None
        started = time.perf_counter()
        gc.collect(generation)
        took_ms = (time.perf_counter() - started) * 1000
        self.collections += 1
        if took_ms > self.longest_ms:
            self.longest_ms = took_ms
            log.debug("gc: generation %d collected on the GUI thread in %.1f ms",
                      generation, took_ms)
        return generation

    def stop(self) -> None:
        """Back to Python's own collector (at exit, or when the window's tests end)."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()
