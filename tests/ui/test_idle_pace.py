"""Listening in silence, the GUI thread wakes rarely: the bridge drains slowly until an
event arrives, the stall monitor ticks slowly outside turns, and a calm avatar repaints
only when the face would look different. No timing assertions: the pace is read from the
timers' intervals and the paints are counted."""

from __future__ import annotations

import threading
import time

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.core.events import AssistantState, SpeechStarted, StateChanged
from app.core.telemetry import InputLevel
from app.ui import bridge as bridge_module
from app.ui import heartbeat
from app.ui.avatar import AvatarWidget
from app.ui.bridge import EventBridge
from app.ui.heartbeat import StallMonitor


def _idle_bridge(qtbot: QtBot, monkeypatch: object) -> EventBridge:
    bridge = EventBridge()
    monkeypatch.setattr(bridge_module, "IDLE_AFTER_S", 0.0)  # type: ignore[attr-defined]
    bridge.drain()  # nothing but (no) levels since creation: slow down
    assert bridge.idle
    assert bridge._timer.interval() == bridge_module.IDLE_DRAIN_INTERVAL_MS
    return bridge


def test_bridge_slows_down_when_only_levels_arrive(qtbot: QtBot, monkeypatch: object) -> None:
    bridge = _idle_bridge(qtbot, monkeypatch)
    levels: list[float] = []
    bridge.input_level.connect(levels.append)
    bridge.post(InputLevel(level=0.01, at=1.0))
    bridge.post(InputLevel(level=0.02, at=1.03))
    assert bridge.idle  # mic levels do not wake it
    bridge.drain()
    assert levels == [0.02] and bridge.idle


def test_an_event_from_another_thread_wakes_the_bridge_at_once(
        qtbot: QtBot, monkeypatch: object) -> None:
    bridge = _idle_bridge(qtbot, monkeypatch)
    monkeypatch.setattr(bridge_module, "IDLE_AFTER_S", 60.0)  # type: ignore[attr-defined]
    started: list[bool] = []
    bridge.speech_started.connect(lambda: started.append(True))
    poster = threading.Thread(target=bridge.post, args=(SpeechStarted(at=2.0, speech_start=1.9),))
    with qtbot.waitSignal(bridge.speech_started, timeout=2_000):
        poster.start()
        poster.join()
    # emitted by the wake (queued to this thread), not by the 150 ms timer
    assert bridge.wakes == 1 and started == [True]
    assert not bridge.idle
    assert bridge._timer.interval() == bridge_module.DRAIN_INTERVAL_MS
    bridge.post(StateChanged(state=AssistantState.LISTENING, at=2.1))
    bridge.drain()
    assert bridge.wakes == 1  # one wake per idle spell


def test_stall_monitor_ticks_fast_only_in_busy_spans(qtbot: QtBot) -> None:
    monitor = StallMonitor()
    monitor.start()
    assert monitor.interval_ms == heartbeat.IDLE_INTERVAL_MS
    monitor.set_busy(True)
    assert monitor.interval_ms == heartbeat.INTERVAL_MS
    ticks = monitor.ticks
    qtbot.waitUntil(lambda: monitor.ticks >= ticks + 2, timeout=2_000)
    assert monitor.interval_ms == heartbeat.INTERVAL_MS
    monitor.set_busy(False)
    qtbot.waitUntil(lambda: monitor.interval_ms == heartbeat.IDLE_INTERVAL_MS, timeout=2_000)
    assert monitor.busy_spans == 1
    monitor.stop()


def test_calm_avatar_repaints_only_when_the_face_moves(qtbot: QtBot) -> None:
    avatar = AvatarWidget(seed=3)
    qtbot.addWidget(avatar)
    avatar.resize(420, 420)
    avatar.show()
    qtbot.waitExposed(avatar)
    avatar.freeze(10.0)
    avatar.set_state(AssistantState.IDLE)
    QApplication.processEvents()
    paints, frames, t = avatar.paints, 0, 10.0
    while t < 20.0:  # ten seconds at the calm 5 fps, blinks included
        t += 0.2
        avatar.advance(t)
        QApplication.processEvents()  # delivers the paint if ``advance`` asked for one
        frames += 1
    calm_paints = avatar.paints - paints
    print(f"calm avatar: {calm_paints} paints over {frames} frames")
    assert 0 < calm_paints < frames / 2, (calm_paints, frames)

    avatar.set_state(AssistantState.LISTENING)  # lively: every frame is painted
    QApplication.processEvents()
    paints = avatar.paints
    for step in range(10):
        avatar.advance(t + 0.03 * (step + 1))
        QApplication.processEvents()
    assert avatar.paints - paints == 10


def test_stall_monitor_counts_long_stalls(qtbot: QtBot) -> None:
    monitor = StallMonitor()
    monitor.start()
    monitor.set_busy(True)
    ticks = monitor.ticks
    qtbot.waitUntil(lambda: monitor.ticks >= ticks + 1, timeout=2_000)
    time.sleep(0.12)  # the GUI thread blocked: the next tick is at least ~95 ms late
    ticks = monitor.ticks
    qtbot.waitUntil(lambda: monitor.ticks >= ticks + 1, timeout=2_000)
    assert monitor.long_stalls >= 1
    assert monitor.max_stall_ms > heartbeat.REPORT_MS
    monitor.reset()
    assert monitor.long_stalls == 0
    monitor.stop()
