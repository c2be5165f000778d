"""Whether the shown persona can answer yet, for an honest status line.

After a persona switch, a saved prompt or new engines, the pipeline still warms the
persona's prefix (its history included) on the LLM thread, loads the recognizer for its
languages and its voices on the TTS thread: 10-26 s with real models, while a question
asked meanwhile waits silently. The core publishes no "ready" event for that work, so
this watches the stages that do it (their inboxes and what they are handling) on a
100 ms timer, which runs only while a load is pending. Each ``expect`` replaces the one
before: a persona that is no longer wanted is never the one reported ready.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.pipeline import VoicePipeline

log = logging.getLogger(__name__)

POLL_MS = 100
QUIET_POLLS = 2
"""Quiet polls in a row before the persona counts as ready: a job the controller has
taken from its inbox but not yet handed to a stage is never seen as done."""


def pipeline_loading(pipeline: VoicePipeline) -> bool:
    """Work queued or in progress where a persona's warm-up and loading happen."""
    stages = pipeline.stages
    return (not pipeline.controller.inbox.empty()
            or stages.transcriber.busy() or stages.responder.busy()
            or stages.synthesizer.busy())


class Readiness(QObject):
    """``expect(pipeline, name)`` after each switch; ``changed`` when ``waiting_for``
    (the persona's name while it is not ready, else None) changes."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pipeline: VoicePipeline | None = None
        self.waiting_for: str | None = None
        self._quiet = 0
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    def expect(self, pipeline: VoicePipeline, name: str) -> None:
        """The pipeline has been asked to get ``name`` ready (it replaces any earlier)."""
        self._pipeline, self._quiet = pipeline, 0
        self.waiting_for = name
        self._timer.start()
        self.changed.emit()

    def forget(self) -> None:
        """No pipeline any more (engines restarting): nothing to wait for here."""
        self._stop()

    def _poll(self) -> None:
        pipeline = self._pipeline
        if pipeline is None or not pipeline.running:
            self._stop()
            return
        if pipeline_loading(pipeline):
            self._quiet = 0
            return
        self._quiet += 1
        if self._quiet >= QUIET_POLLS:
            log.info("persona %s ready", self.waiting_for)
            self._stop()

    def _stop(self) -> None:
        self._timer.stop()
        self._pipeline = None
        if self.waiting_for is not None:
            self.waiting_for = None
            self.changed.emit()
