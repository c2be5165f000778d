"""Published idleness: waiters block until it has held long enough, woken by changes."""

from __future__ import annotations

import threading
import time

from app.core.runtime.idleness import IdleSignal


def test_a_waiter_returns_once_idle_has_held_for_the_settle_time() -> None:
    busy = {"now": True}
    signal = IdleSignal(lambda: not busy["now"], time.monotonic)
    results: list[bool] = []
    waiter = threading.Thread(target=lambda: results.append(signal.wait_idle(0.1, 5.0)))
    started = time.monotonic()
    waiter.start()
    time.sleep(0.2)
    assert not results  # still busy: no answer yet, however long
    busy["now"] = False
    signal.changed()  # the last thread to finish says so
    waiter.join(5)
    assert results == [True]
    assert 0.3 <= time.monotonic() - started < 2.0


def test_going_busy_again_restarts_the_settle_time() -> None:
    busy = {"now": False}
    signal = IdleSignal(lambda: not busy["now"], time.monotonic)
    signal.changed()
    assert signal.idle_for() >= 0.0
    busy["now"] = True
    signal.changed()
    assert signal.idle_for() == 0.0
    assert not signal.wait_idle(0.05, 0.2)  # busy throughout: times out


def test_give_up_ends_the_wait() -> None:
    signal = IdleSignal(lambda: False, time.monotonic)
    give_up = threading.Event()
    results: list[bool] = []
    waiter = threading.Thread(
        target=lambda: results.append(signal.wait_idle(0.1, 30.0, give_up)))
    waiter.start()
    give_up.set()
    signal.wake()
    waiter.join(5)
    assert results == [False]
