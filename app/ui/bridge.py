"""Pipeline events (controller thread) -> Qt signals (GUI thread).

``post`` is the pipeline observer: it only does ``put_nowait``, so the controller thread
never waits on the GUI. A QTimer drains the queue on the GUI thread and emits one typed
signal per event kind. Playback and mic levels arrive at 30-50 Hz; only the latest of each
per drain is emitted, since the avatar and the meter only show the current value.

The drain runs every 30 ms while something happens (a turn, playback) and every 150 ms
when only mic levels have come for a second (listening in silence, where the 30 ms drain
was a steady share of the idle CPU). The first other event wakes it at once: ``post``
emits ``_wake`` once per idle spell, a queued signal that drains on the GUI thread, so no
event waits for the slow timer; only the meter updates at ~7 Hz while nobody speaks.

Mic levels are not queued: ``post`` keeps only the latest (the meter shows nothing else).
Once the level has stayed within ``LEVEL_STEP_DB`` of what the meter shows for
``SLEEP_AFTER_S`` (a quiet room, or a microphone giving digital silence) the timer stops
altogether: the GUI thread is not woken at all for the bridge. ``post`` wakes it again
(``_wake_levels``, queued, once per sleep) when a level would move the meter, and
``_wake`` for any other event, as when idle.
"""

from __future__ import annotations

import queue
import time

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from app.core.events import (
    BargeIn,
    PlaybackEnded,
    PlaybackStarted,
    ReplyChunk,
    SpeechAudio,
    SpeechPaused,
    SpeechStarted,
    StageFailed,
    StateChanged,
    Transcript,
    TurnCancelled,
    TurnCommitted,
    TurnConfirmed,
)
from app.core.telemetry import (
    ExpressionCue,
    InputLevel,
    MouthCue,
    PlaybackLevel,
    TokenDelta,
    level_db,
)

DRAIN_INTERVAL_MS = 30
IDLE_DRAIN_INTERVAL_MS = 150
IDLE_AFTER_S = 1.0
"""Seconds with nothing but mic levels before the drain slows down."""
SLEEP_AFTER_S = 1.5
"""Seconds of steady mic levels (while idle) before the drain timer stops."""
LEVEL_STEP_DB = 6.0
"""A level this far (dB, on the meter's -60..0 dB scale) from the one shown wakes a
sleeping bridge (12 pixels of the 120-pixel meter). A room's noise floor through a real
microphone wanders 2-3 dB from one 32 ms frame to the next (two thirds of frames move
1 dB or more); at a 1 dB step the bridge never slept and idle CPU rose 1 point. A voice
is 20 dB or more above the room: it wakes the bridge at its first frame."""



class EventBridge(QObject):
    """Turns queued pipeline events into signals; every signal fires on the GUI thread."""

    any_event = Signal(object)
    """Every drained event (levels excluded), in order; for logging and tests."""
    state_changed = Signal(object)  # AssistantState
    speech_started = Signal()
    speech_paused = Signal()
    """The user paused (the listener's first short pause): the face nods."""
    transcript = Signal(int, str)
    token = Signal(int, str)
    reply_chunk = Signal(int, int, str)
    chunk_audio = Signal(int, int, str, float)  # turn, index, text, duration (s)
    playback_started = Signal(int, float)  # turn, playback clock (s)
    playback_level = Signal(float, float)  # level, playback clock (s)
    expression = Signal(int, object, float)  # turn, Emotion | None, playback clock (s)
    mouth = Signal(object)  # MouthCue: a mouth timeline and when it sounds
    playback_ended = Signal(int, str, bool)
    barge_in = Signal(int)
    input_level = Signal(float)
    turn_confirmed = Signal(int)
    turn_cancelled = Signal(int, str)
    turn_committed = Signal(int)
    stage_failed = Signal(str, str)
    other = Signal(object)
    """Anything else posted (device status from the audio thread, for instance)."""
    _wake = Signal()
    """Emitted from the posting thread when an event arrives while idle (queued)."""
    _wake_levels = Signal()
    """Emitted from the posting thread when a level that moves the meter arrives while the
    bridge sleeps (queued)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._idle = False
        """Written on the GUI thread only; ``post`` reads it (a stale read costs at most
        one extra wake, and ``_go_idle`` re-checks the queue after setting it)."""
        self._last_activity = time.monotonic()
        self._asleep = False
        """Idle and the timer stopped (levels steady). Same threading as ``_idle``."""
        self._latest_level: tuple[int, float] = (0, 0.0)
        """(sequence number, RMS) of the newest mic level; replaced whole by ``post``."""
        self._level_seen = 0
        self._shown_db = level_db(0.0)
        """The last emitted level that moved the meter, in meter dB (GUI thread writes,
        ``post`` reads)."""
        self._steady_since = time.monotonic()
        self.wakes = 0
        self.level_wakes = 0
        self._timer = QTimer(self)
        self._timer.setInterval(DRAIN_INTERVAL_MS)
        self._timer.timeout.connect(self.drain)
        self._wake.connect(self._on_wake, Qt.ConnectionType.QueuedConnection)
        self._wake_levels.connect(self._on_level_wake, Qt.ConnectionType.QueuedConnection)
        self._timer.start()

    @property
    def idle(self) -> bool:
        """Draining at the slow idle pace (or not at all, ``asleep``)."""
        return self._idle

    @property
    def asleep(self) -> bool:
        """Idle with steady mic levels: the drain timer is stopped."""
        return self._asleep

    def post(self, item: object) -> None:
        """Thread-safe and non-blocking: the only thing the pipeline's thread calls."""
        if isinstance(item, InputLevel):
            self._latest_level = (self._latest_level[0] + 1, item.level)
            if self._asleep and abs(level_db(item.level) - self._shown_db) >= LEVEL_STEP_DB:
                self._asleep = False  # one level wake per sleep
                self._wake_levels.emit()
            return
        self._queue.put_nowait(item)
        if self._idle:
            self._idle = False  # one wake per idle spell
            self._asleep = False
            self._wake.emit()

    def _on_wake(self) -> None:
        self.wakes += 1
        self._set_active()
        self.drain()

    def _on_level_wake(self) -> None:
        """A sleeping bridge drains levels at the idle pace again (stays idle)."""
        self.level_wakes += 1
        self._asleep = False
        self._steady_since = time.monotonic()
        if not self._timer.isActive():
            self._timer.start(IDLE_DRAIN_INTERVAL_MS)
        self.drain()

    def _set_active(self) -> None:
        self._idle = False
        self._asleep = False
        self._last_activity = time.monotonic()
        if self._timer.interval() != DRAIN_INTERVAL_MS or not self._timer.isActive():
            self._timer.start(DRAIN_INTERVAL_MS)

    def _go_to_sleep(self) -> None:
        self._timer.stop()
        self._asleep = True
        seq, level = self._latest_level
        if seq != self._level_seen and abs(level_db(level) - self._shown_db) >= LEVEL_STEP_DB:
            self._on_level_wake()  # posted before ``post`` could see the flag
        elif not self._queue.empty():
            self._set_active()

    def _go_idle(self) -> None:
        self._timer.setInterval(IDLE_DRAIN_INTERVAL_MS)
        self._idle = True
        if not self._queue.empty():  # posted before ``post`` could see the flag
            self._set_active()

    def drain(self) -> None:
        """Emit everything queued so far (GUI thread)."""
        playback_level: PlaybackLevel | None = None
        active = False
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            active = True
            if isinstance(item, PlaybackLevel):
                playback_level = item
            else:
                if playback_level is not None:  # keep levels ordered with playback events
                    self.playback_level.emit(playback_level.level, playback_level.at)
                    playback_level = None
                self._emit(item)
        if playback_level is not None:
            self.playback_level.emit(playback_level.level, playback_level.at)
        now = time.monotonic()
        seq, level = self._latest_level
        if seq != self._level_seen:
            self._level_seen = seq
            shown = level_db(level)
            if abs(shown - self._shown_db) >= LEVEL_STEP_DB:  # the meter moves
                self._steady_since = now
                self._shown_db = shown
            self.input_level.emit(level)
        if active:
            self._set_active()
        elif not self._idle and now - self._last_activity >= IDLE_AFTER_S:
            self._go_idle()
            self._steady_since = now
        elif (self._idle and not self._asleep and now - self._steady_since >= SLEEP_AFTER_S
              and self._timer.isActive()):
            self._go_to_sleep()

    def _emit(self, item: object) -> None:
        self.any_event.emit(item)
        match item:
            case StateChanged():
                self.state_changed.emit(item.state)
            case SpeechStarted():
                self.speech_started.emit()
            case SpeechPaused():
                self.speech_paused.emit()
            case ExpressionCue():
                self.expression.emit(item.turn_id, item.emotion, item.at)
            case MouthCue():
                self.mouth.emit(item)
            case Transcript():
                self.transcript.emit(item.turn_id, item.text)
            case TokenDelta():
                self.token.emit(item.turn_id, item.text)
            case ReplyChunk():
                self.reply_chunk.emit(item.turn_id, item.index, item.text)
            case SpeechAudio():
                seconds = item.samples.size / max(1, item.sample_rate)
                self.chunk_audio.emit(item.turn_id, item.index, item.text, seconds)
            case PlaybackStarted():
                self.playback_started.emit(item.turn_id, item.at)
            case PlaybackEnded():
                self.playback_ended.emit(item.turn_id, item.heard_text, item.interrupted)
            case BargeIn():
                self.barge_in.emit(item.turn_id)
            case TurnConfirmed():
                self.turn_confirmed.emit(item.turn_id)
            case TurnCancelled():
                self.turn_cancelled.emit(item.turn_id, item.reason)
            case TurnCommitted():
                self.turn_committed.emit(item.turn_id)
            case StageFailed():
                self.stage_failed.emit(item.stage, item.message)
            case _:
                self.other.emit(item)
