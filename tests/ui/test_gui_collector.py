"""The cyclic garbage collector runs on the GUI thread only, so a Qt object caught in a
reference cycle is never deleted on a worker thread."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from PySide6.QtCore import QObject

from app.ui.gui_collector import GuiThreadCollector, generation_due


class _Holder:
    """A Qt object in a reference cycle, as a slot's closure makes one."""

    def __init__(self) -> None:
        self.qobject = QObject()
        self.me = self


def test_a_cycle_dropped_on_a_worker_thread_is_freed_on_the_gui_thread(qtbot: Any) -> None:
    collector = GuiThreadCollector(check_ms=20)
    try:
        assert not gc.isenabled()
        freed_on: list[str] = []

        def worker() -> None:
            holder = _Holder()
            weakref.finalize(holder, lambda: freed_on.append(threading.current_thread().name))
            del holder
            # allocations that would have made the collector run here, on this thread
            kept = [[] for _ in range(5 * gc.get_threshold()[0])]
            del kept

        thread = threading.Thread(target=worker, name="stage-worker")
        thread.start()
        thread.join()
        assert freed_on == []  # nothing collected it on the worker
        kept = [[] for _ in range(2 * gc.get_threshold()[0])]  # so a collection is due
        qtbot.waitUntil(lambda: freed_on != [], timeout=5000)
        del kept
        assert freed_on == [threading.main_thread().name]
        assert collector.collections >= 1
    finally:
        collector.stop()


def test_stopping_gives_the_collector_back_as_it_was(qtbot: Any) -> None:
    gc.enable()
    collector = GuiThreadCollector()
    assert not gc.isenabled()
    collector.stop()
    assert gc.isenabled()
    gc.disable()  # the UI tests' own setting (conftest)
    collector = GuiThreadCollector()
    collector.stop()
    assert not gc.isenabled()


def test_the_due_generation_follows_the_collectors_own_counts() -> None:
    old = gc.get_threshold()
    try:
        gc.collect()
        gc.set_threshold(1_000_000, 10, 10)
        assert generation_due() is None  # few allocations since
        gc.set_threshold(1, 1_000, 1_000)
        kept = [[] for _ in range(10)]
        assert generation_due() == 0
        del kept
    finally:
        gc.set_threshold(*old)
