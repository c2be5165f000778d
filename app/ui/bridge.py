"""Pipeline events (controller thread) -> Qt signals (GUI thread).

``post`` is the pipeline observer: it only does ``put_nowait``, so the controller thread
never waits on the GUI. A QTimer drains the queue every 30 ms on the GUI thread and emits
one typed signal per event kind. Playback and mic levels arrive at 50 Hz; only the latest
of each per drain is emitted, since the avatar and the meter only show the current value.
"""

from __future__ import annotations

import queue

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.events import (
    BargeIn,
    InputLevel,
    PlaybackEnded,
    PlaybackLevel,
    PlaybackStarted,
    ReplyChunk,
    SpeechAudio,
    SpeechStarted,
    StageFailed,
    StateChanged,
    TokenDelta,
    Transcript,
    TurnCancelled,
    TurnCommitted,
    TurnConfirmed,
)

DRAIN_INTERVAL_MS = 30


class EventBridge(QObject):
    """Turns queued pipeline events into signals; every signal fires on the GUI thread."""

    any_event = Signal(object)
    """Every drained event (levels excluded), in order; for logging and tests."""
    state_changed = Signal(object)  # AssistantState
    speech_started = Signal()
    transcript = Signal(int, str)
    token = Signal(int, str)
    reply_chunk = Signal(int, int, str)
    chunk_audio = Signal(int, int, str, float)  # turn, index, text, duration (s)
    playback_started = Signal(int, float)  # turn, playback clock (s)
    playback_level = Signal(float, float)  # level, playback clock (s)
    playback_ended = Signal(int, str, bool)
    barge_in = Signal(int)
    input_level = Signal(float)
    turn_confirmed = Signal(int)
    turn_cancelled = Signal(int, str)
    turn_committed = Signal(int)
    stage_failed = Signal(str, str)
    other = Signal(object)
    """Anything else posted (device status from the audio thread, for instance)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._timer = QTimer(self)
        self._timer.setInterval(DRAIN_INTERVAL_MS)
        self._timer.timeout.connect(self.drain)
        self._timer.start()

    def post(self, item: object) -> None:
        """Thread-safe and non-blocking: the only thing the pipeline's thread calls."""
        self._queue.put_nowait(item)

    def drain(self) -> None:
        """Emit everything queued so far (GUI thread)."""
        playback_level: PlaybackLevel | None = None
        input_level: InputLevel | None = None
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, PlaybackLevel):
                playback_level = item
            elif isinstance(item, InputLevel):
                input_level = item
            else:
                if playback_level is not None:  # keep levels ordered with playback events
                    self.playback_level.emit(playback_level.level, playback_level.at)
                    playback_level = None
                self._emit(item)
        if playback_level is not None:
            self.playback_level.emit(playback_level.level, playback_level.at)
        if input_level is not None:
            self.input_level.emit(input_level.level)

    def _emit(self, item: object) -> None:
        self.any_event.emit(item)
        match item:
            case StateChanged():
                self.state_changed.emit(item.state)
            case SpeechStarted():
                self.speech_started.emit()
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
