"""The heartbeat says what a late tick was: the GUI thread working (its own CPU time), the
collector running, or a thread of the app waiting for a CPU; and the two start-up
settings that keep the GUI thread from waiting on others (serial Qt painting, start-up
objects frozen out of full collections)."""

from __future__ import annotations

import gc
import os
import threading
import time

import pytest
from pytestqt.qtbot import QtBot

from app.ui import serial_paint
from app.ui.gc_freeze import freeze_startup_objects
from app.ui.heartbeat import Stall, StallMonitor, run_queue_waits


def _next_tick(qtbot: QtBot, monitor: StallMonitor) -> None:
    ticks = monitor.ticks
    qtbot.waitUntil(lambda: monitor.ticks >= ticks + 1, timeout=3_000)


def _busy_monitor(qtbot: QtBot) -> StallMonitor:
    monitor = StallMonitor()
    monitor.start()
    monitor.set_busy(True)
    _next_tick(qtbot, monitor)
    return monitor


def test_a_working_gui_thread_shows_its_own_cpu_and_what_was_noted(qtbot: QtBot) -> None:
    monitor = _busy_monitor(qtbot)
    monitor.note("persona switch")
    end = time.thread_time() + 0.15
    while time.thread_time() < end:  # 150 ms of the GUI thread's own CPU
        pass
    _next_tick(qtbot, monitor)
    monitor.stop()
    worst = monitor.worst[0]
    assert worst.late_ms > 100
    assert worst.gui_cpu_ms >= 140 and worst.process_cpu_ms >= worst.gui_cpu_ms - 1
    assert worst.notes == ("persona switch",)
    assert "persona switch" in worst.describe()
    assert len(monitor.worst) <= 5
    assert [s.late_ms for s in monitor.worst] == sorted((s.late_ms for s in monitor.worst),
                                                        reverse=True)


def test_a_waiting_gui_thread_uses_no_cpu(qtbot: QtBot) -> None:
    monitor = _busy_monitor(qtbot)
    time.sleep(0.15)  # blocked, not working (a lock, the GIL, the disk)
    _next_tick(qtbot, monitor)
    monitor.stop()
    worst = monitor.worst[0]
    assert worst.late_ms > 100
    assert worst.gui_cpu_ms < 50
    assert worst.notes == ()
    assert worst.cpu_wait_ms is None  # run-queue waits are read only when asked


def test_collections_and_cpu_waits_are_reported_when_tracked(qtbot: QtBot) -> None:
    monitor = _busy_monitor(qtbot)
    monitor.track_gc()
    assert monitor._on_gc in gc.callbacks
    _next_tick(qtbot, monitor)
    for _ in range(20_000):  # cyclic garbage for a full collection to find
        loop: list[object] = []
        loop.append(loop)
    gc.collect()
    time.sleep(0.08)
    _next_tick(qtbot, monitor)
    monitor.stop()  # also removes the hook
    assert monitor._on_gc not in gc.callbacks
    worst = monitor.worst[0]
    assert worst.gc_counts[2] >= 1 and worst.gc_ms > 0
    assert monitor.gc_collections[2] >= 1 and monitor.gc_longest_ms[2] > 0
    assert worst.cpu_wait_ms is not None and worst.cpu_wait_ms >= 0
    assert worst.waiting_thread
    assert "gen2 x" in worst.describe() and "wait for a CPU" in worst.describe()


def test_run_queue_waits_cover_every_thread_of_the_process() -> None:
    ready, done = threading.Event(), threading.Event()

    def worker() -> None:
        ready.set()
        done.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    ready.wait(5)
    try:
        waits = run_queue_waits()
    finally:
        done.set()
        thread.join()
    tids = {key.rsplit("/", 1)[1] for key in waits}
    assert {str(threading.get_native_id()), str(thread.native_id)} <= tids
    assert all(seconds >= 0 for seconds in waits.values())


def test_app_lateness_is_the_lateness_less_the_longest_cpu_wait() -> None:
    starved = Stall(200.0, 1.0, True, 3.0, 4.0, 0.0, cpu_wait_ms=190.0, waiting_thread="x/1")
    assert starved.app_late_ms == pytest.approx(10.0)
    assert Stall(80.0, 1.0, True, 75.0, 76.0, 0.0).app_late_ms == 80.0  # nothing read
    assert Stall(50.0, 1.0, True, 1.0, 1.0, 0.0, cpu_wait_ms=70.0).app_late_ms == 0.0


def test_start_up_objects_are_frozen_out_of_full_collections() -> None:
    assert gc.get_freeze_count() == 0
    tracked = len(gc.get_objects())
    try:
        frozen = freeze_startup_objects()
        assert frozen >= tracked // 2
        assert len(gc.get_objects()) < tracked // 2  # what a full collection walks now
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0


def test_qt_paints_serially_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(serial_paint.VARIABLE, raising=False)
    serial_paint.paint_serially()
    assert os.environ[serial_paint.VARIABLE] == "1"
    monkeypatch.setenv(serial_paint.VARIABLE, "yes")
    serial_paint.paint_serially()
    assert os.environ[serial_paint.VARIABLE] == "yes"
