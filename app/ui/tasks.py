"""Run slow work (engine loading, downloads, pipeline restarts) off the GUI thread.

The worker thread never touches Qt: it puts messages on a queue, and a QTimer on the GUI
thread drains it and emits signals. That keeps the "only the GUI thread touches Qt" rule
without QThread subclasses.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal

log = logging.getLogger(__name__)

T = TypeVar("T")
Report = Callable[[object], None]
"""Called by the work function (any thread) to send a progress message to the GUI."""


class _Done(Generic[T]):
    def __init__(self, result: T) -> None:
        self.result = result


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


class BackgroundTask(QObject, Generic[T]):
    """One run of ``work(report)`` on a daemon thread; signals arrive on the GUI thread."""

    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(object)

    def __init__(
        self, work: Callable[[Report], T], name: str = "task", parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._work = work
        self._queue: queue.Queue[object] = queue.Queue()
        self._timer = QTimer(self)
        self._timer.setInterval(30)
        self._timer.timeout.connect(self._drain)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.done = False

    def start(self) -> None:
        self._timer.start()
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            result = self._work(self._queue.put_nowait)
        except BaseException as exc:  # reported to the GUI; a worker must never die silently
            log.debug("task %s failed", self._thread.name, exc_info=True)
            self._queue.put_nowait(_Failed(exc))
        else:
            self._queue.put_nowait(_Done(result))

    def _drain(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, _Done):
                self._finish()
                self.finished.emit(item.result)
                return
            if isinstance(item, _Failed):
                self._finish()
                self.failed.emit(item.error)
                return
            self.progress.emit(item)

    def _finish(self) -> None:
        self._timer.stop()
        self.done = True
