"""Listening in silence, nothing wakes the GUI thread on a timer it does not need: the
bridge stops its drain timer once the mic level is steady (a loud level or any event
wakes it from the posting thread), and SIGTERM reaches Python through a socket the event
loop watches instead of a 200 ms timer."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.core.events import SpeechStarted
from app.core.telemetry import InputLevel
from app.ui import bridge as bridge_module
from app.ui import main as main_module
from app.ui.bridge import EventBridge


def _asleep_bridge(monkeypatch: pytest.MonkeyPatch) -> tuple[EventBridge, list[float]]:
    monkeypatch.setattr(bridge_module, "IDLE_AFTER_S", 0.0)
    monkeypatch.setattr(bridge_module, "SLEEP_AFTER_S", 0.0)
    bridge = EventBridge()
    levels: list[float] = []
    bridge.input_level.connect(levels.append)
    bridge.post(InputLevel(level=0.0, at=1.0))  # digital silence, as the bench's mic
    bridge.drain()  # idle
    assert bridge.idle and not bridge.asleep
    bridge.post(InputLevel(level=0.0, at=1.03))
    bridge.drain()  # steady levels: the timer stops
    return bridge, levels


def test_steady_levels_stop_the_drain_timer(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    bridge, levels = _asleep_bridge(monkeypatch)
    assert bridge.asleep
    assert not bridge._timer.isActive()
    for step in range(20):  # the level does not move the meter: nobody is woken
        bridge.post(InputLevel(level=10 ** (-80 / 20) * (1 + step % 2), at=2.0 + step))
    QApplication.processEvents()
    assert bridge.level_wakes == 0 and bridge.asleep and not bridge._timer.isActive()
    assert levels == [0.0, 0.0]


def test_a_level_that_moves_the_meter_wakes_a_sleeping_bridge(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    bridge, levels = _asleep_bridge(monkeypatch)
    monkeypatch.setattr(bridge_module, "SLEEP_AFTER_S", 60.0)
    poster = threading.Thread(target=bridge.post, args=(InputLevel(level=0.1, at=3.0),))
    with qtbot.waitSignal(bridge.input_level, timeout=2_000):
        poster.start()
        poster.join()
    assert levels[-1] == 0.1
    assert bridge.level_wakes == 1 and bridge.wakes == 0
    assert bridge.idle and not bridge.asleep  # levels again at the idle pace, not 30 ms
    assert bridge._timer.isActive()
    assert bridge._timer.interval() == bridge_module.IDLE_DRAIN_INTERVAL_MS


def test_an_event_wakes_a_sleeping_bridge_at_once(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    bridge, _levels = _asleep_bridge(monkeypatch)
    monkeypatch.setattr(bridge_module, "IDLE_AFTER_S", 60.0)
    poster = threading.Thread(target=bridge.post, args=(SpeechStarted(at=4.0, speech_start=3.9),))
    with qtbot.waitSignal(bridge.speech_started, timeout=2_000):
        poster.start()
        poster.join()
    assert bridge.wakes == 1 and not bridge.idle and not bridge.asleep
    assert bridge._timer.isActive()
    assert bridge._timer.interval() == bridge_module.DRAIN_INTERVAL_MS


def test_sigterm_reaches_python_without_a_polling_timer(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    loop = QEventLoop()
    quits: list[float] = []

    class Timer:  # the handler's ``QTimer.singleShot(0, app.quit)``, recorded instead
        @staticmethod
        def singleShot(_ms: int, _slot: object) -> None:
            quits.append(time.monotonic())
            loop.quit()

    active_before = sum(t.isActive() for t in app.findChildren(QTimer))
    restore = main_module._quit_on_signals(app)
    try:
        assert sum(t.isActive() for t in app.findChildren(QTimer)) == active_before
        monkeypatch.setattr(main_module, "QTimer", Timer)
        guard = QTimer()
        guard.setSingleShot(True)
        guard.timeout.connect(loop.quit)
        guard.start(3_000)
        sender = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
        started = time.monotonic()
        sender.start()
        loop.exec()  # C++ only: Python runs again when the notifier fires (or the guard)
        sender.join()
        guard.stop()
    finally:
        restore()
    assert quits, "the signal handler never ran"
    assert quits[0] - started < 1.0
    assert signal.getsignal(signal.SIGTERM) is not None


def test_a_rooms_noise_floor_does_not_wake_a_sleeping_bridge(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real microphone in a room: the level wanders a few dB around -48 dBFS from frame
    to frame; a voice, 20 dB above it, wakes the bridge at once."""
    monkeypatch.setattr(bridge_module, "IDLE_AFTER_S", 0.0)
    monkeypatch.setattr(bridge_module, "SLEEP_AFTER_S", 0.0)
    bridge = EventBridge()
    wander = [-48.0, -45.5, -50.5, -47.0, -51.0, -45.0, -49.0]
    for index, db in enumerate([-48.0, -48.0, *wander * 5]):
        bridge.post(InputLevel(level=10 ** (db / 20), at=1.0 + index * 0.032))
        bridge.drain()
    QApplication.processEvents()
    assert bridge.asleep and bridge.level_wakes == 0
    bridge.post(InputLevel(level=10 ** (-30 / 20), at=3.0))  # someone speaks
    QApplication.processEvents()
    assert bridge.level_wakes == 1
