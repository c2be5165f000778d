"""Telemetry beside the decisions: the recorder and every observer, on their own thread.

The stages post tokens, levels, prefix reuse and notices here directly, and the controller
posts each control event here after the turn machine has acted on it, so about 150 events
a second never queue in front of a decision, and a slow observer (the window's bridge, the
history writer) never delays one. Observers are called on this one thread, in the order
the events arrived.
"""

from __future__ import annotations

import copy
import logging
import queue
import threading
from collections.abc import Callable

from app.core.events import PipelineEvent, PlaybackEnded
from app.core.metrics import TimelineRecorder
from app.core.telemetry import TurnTimed

log = logging.getLogger(__name__)

Observer = Callable[[PipelineEvent], None]


class TelemetryHub:
    def __init__(self, timelines_kept: int | None = None) -> None:
        self.recorder = TimelineRecorder(timelines_kept)
        self.observers: list[Observer] = []
        self.inbox: queue.Queue[PipelineEvent | None] = queue.Queue()
        self._handling = False
        self.on_settled: Callable[[], None] = lambda: None
        """Called when the queue has been worked off (the pipeline's ``IdleSignal``)."""
        self._thread = threading.Thread(target=self._run, name="telemetry", daemon=True)

    def post(self, event: PipelineEvent) -> None:
        """From any thread; never blocks."""
        self.inbox.put_nowait(event)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Delivers what is queued, then the thread returns."""
        self.inbox.put_nowait(None)
        if self._thread.is_alive():
            self._thread.join(5)

    def busy(self) -> bool:
        return self._handling or not self.inbox.empty()

    def drain(self) -> None:
        """Deliver everything queued now, on the caller's thread (a pipeline driven by
        hand, without its threads)."""
        while True:
            try:
                event = self.inbox.get_nowait()
            except queue.Empty:
                return
            if event is not None:
                self.deliver(event)

    def _run(self) -> None:
        while (event := self.inbox.get()) is not None:
            self._handling = True
            try:
                self.deliver(event)
            finally:
                self._handling = False
            if self.inbox.empty():
                self.on_settled()

    def deliver(self, event: PipelineEvent) -> None:
        self.recorder.observe(event)
        self._notify(event)
        if isinstance(event, PlaybackEnded):
            timeline = self.recorder.turns.get(event.turn_id)
            if timeline is not None and timeline.confirmed:
                self._notify(TurnTimed(event.turn_id, copy.deepcopy(timeline)))

    def _notify(self, event: PipelineEvent) -> None:
        for observer in self.observers:
            try:
                observer(event)
            except Exception:
                log.exception("observer failed")
