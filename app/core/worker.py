"""A stage: a thread draining a typed inbox, and the one live turn its work checks.

Errors in a job become ``StageFailed`` events instead of killing the thread; the model
stages run at a lower priority than the audio, GUI and controller threads.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar, cast, runtime_checkable

from app.core.events import PipelineEvent, StageFailed

log = logging.getLogger(__name__)

Publish = Callable[[PipelineEvent], None]


class LiveTurn:
    """The one turn whose work is still wanted. Reads and writes are atomic ints."""

    def __init__(self) -> None:
        self.turn_id: int | None = None
        self.activity = 0
        """Bumped when the user starts speaking or a turn starts: background work (the
        memory extraction) started at another value is no longer wanted."""
        self.first_audio_priority = True
        """The responder waits between tokens while the reply's first chunk is being
        synthesized: on a 2-core CPU the LLM and TTS otherwise share the cores exactly
        when the user is waiting for the first sound."""
        self.first_audio_done = threading.Event()
        """Clear from the first chunk's hand-over until the synthesizer is done with it."""
        self.first_audio_done.set()

    def is_live(self, turn_id: int) -> bool:
        return self.turn_id == turn_id


class _Stop:
    pass


class _Wake:
    """Look now (``Worker.wake``): ``poll`` runs at once instead of after ``poll_s``."""


def _nothing() -> None:
    pass


@runtime_checkable
class _HasTurn(Protocol):
    turn_id: int | None


_STOP = _Stop()
_WAKE = _Wake()

Job = TypeVar("Job")


HEAVY_WORK_NICENESS = 5
"""How much lower than the audio, GUI and controller threads the model stages run (Linux
and macOS nice levels). On two cores a Kokoro sentence or an LLM decode keeps every core
busy; the device callbacks and the speaker feeder must still run every few milliseconds,
or the speaker underflows (heard as dropouts) under load. Model libraries start their own
worker threads from the stage's thread, and those inherit its priority."""


def lower_this_threads_priority(niceness: int) -> bool:
    """Raise this thread's nice value (no privilege needed); False where not supported."""
    setpriority = getattr(os, "setpriority", None)
    if setpriority is None or niceness <= 0:
        return False
    try:  # PRIO_PROCESS with a thread id applies to that thread alone on Linux
        current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        setpriority(os.PRIO_PROCESS, threading.get_native_id(), current + niceness)
    except OSError:
        return False
    return True


class Worker(Generic[Job]):
    """A thread draining a typed inbox; subclasses implement ``handle``."""

    name = "worker"
    niceness = 0
    """Raised by this much on start (``HEAVY_WORK_NICENESS`` for the model stages)."""

    def __init__(self, publish: Publish) -> None:
        self.publish = publish
        self.inbox: queue.Queue[Job] = queue.Queue()
        self._handling = False
        self.on_settled: Callable[[], None] = _nothing
        """Called when the inbox has been worked off (the pipeline's ``IdleSignal``)."""
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.inbox.put(cast(Job, _STOP))  # the one item outside the inbox's type
        if self._thread.is_alive():
            self._thread.join(timeout)

    def wake(self) -> None:
        """Thread-safe: poll now (a worker waiting out a long ``poll_s`` is needed sooner)."""
        self.inbox.put(cast(Job, _WAKE))

    def busy(self) -> bool:
        """Work is queued or in progress."""
        return self._handling or not self.inbox.empty()

    def _run(self) -> None:
        lower_this_threads_priority(self.niceness)
        while True:
            try:
                item: Job | None = self.inbox.get(timeout=self.poll_s())
            except queue.Empty:
                item = None
            if isinstance(item, _Stop):
                return
            if isinstance(item, _Wake):
                item = None
            if item is not None and self.before_poll(item):
                self._guarded(item)  # it says how to take what waits outside the inbox
                self._guarded(None)
            else:
                self._guarded(None)  # what arrived outside the inbox comes first
                if item is not None:
                    self._guarded(item)
            if item is not None and self.inbox.empty():
                self.on_settled()

    def _guarded(self, item: Job | None) -> None:
        """``handle(item)``, or ``poll()`` for None; an error becomes ``StageFailed``."""
        self._handling = True
        try:
            if item is None:
                self.poll()
            else:
                self.handle(item)
        except Exception as exc:
            log.exception("%s failed", self.name)
            turn_id = item.turn_id if isinstance(item, _HasTurn) else None
            self.publish(StageFailed(self.name, str(exc) or type(exc).__name__, turn_id))
        finally:
            self._handling = False

    def handle(self, item: Job) -> None:
        raise NotImplementedError

    def before_poll(self, item: Job) -> bool:
        """Whether ``item`` is handled before ``poll`` (it changes how polled work is taken)."""
        return False

    def poll_s(self) -> float | None:
        """How long to wait for an inbox item before ``poll`` (None: until one comes)."""
        return None

    def poll(self) -> None:
        """Work that does not come through the inbox (the listener's microphone ring);
        called at every wake-up, before the item that woke the thread, if any."""
