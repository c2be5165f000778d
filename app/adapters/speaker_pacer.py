"""Pausing a speaker stream that has nothing to play, and starting it again at once.

An open speaker stream costs a real-time callback every 20 ms (and as many wake-ups of
the sound server's client thread) even when it only plays silence: about 1.5 % of a core
on a 2-core machine, a third of what the app spent listening in silence. So once the
prepared buffer has been idle for ``pause_after`` seconds the stream is aborted, and
``wake`` (the buffer's writer calls it when a reply's playback *opens*, before its first
synthesized audio) starts it again: about 1 ms to the first callback on PulseAudio, so
first audio is not later. ``abort`` rather than ``stop``: stop drains PortAudio's buffers
(1.6 s measured).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class SpeakerPacer:
    """The pause state of one speaker stream; called under its owner's lock."""

    def __init__(self, output_idle: Callable[[], bool] | None,
                 pause_after: float | None) -> None:
        self._output_idle = output_idle
        """Whether the speaker has nothing to play (nothing buffered, nothing coming)."""
        self._pause_after = pause_after if output_idle is not None else None
        self.paused = False
        self._idle_since: float | None = None
        self.pauses = 0
        """Times the stream was paused for want of audio (tests, diagnostics)."""

    def forget(self) -> None:
        """The stream was closed: a new one starts unpaused."""
        self.paused = False
        self._idle_since = None

    def pace(self, stream: Any) -> bool:
        """Pause ``stream`` once it has been idle long enough; start it again if audio came
        without a ``wake`` (a safety net). True when it was started again here."""
        if (self._pause_after is None or self._pause_after <= 0
                or self._output_idle is None or stream is None):
            return False
        try:
            idle = self._output_idle()
        except Exception:
            log.exception("output_idle() failed; the speaker stays open")
            idle = False
        now = time.monotonic()
        if not idle:
            self._idle_since = None
            return self.paused and self.wake(stream)
        if self.paused:
            return False
        if self._idle_since is None:
            self._idle_since = now
        elif now - self._idle_since >= self._pause_after:
            try:
                stream.abort()  # not stop(): that drains PortAudio's buffers first
            except Exception as exc:
                log.warning("pausing the speaker stream failed: %s", exc)
                return False
            self.paused = True
            self.pauses += 1
            log.debug("speaker stream paused (idle %.1f s)", now - self._idle_since)
        return False

    def wake(self, stream: Any) -> bool:
        """Start the paused ``stream`` again; True when it was started."""
        self._idle_since = None
        if not self.paused:
            return False
        self.paused = False
        if stream is None:
            return False
        started = time.perf_counter()
        try:
            stream.start()
        except Exception as exc:  # the watchdog sees an inactive stream and reopens it
            log.warning("restarting the speaker stream failed: %s", exc)
            return False
        log.debug("speaker stream restarted in %.1f ms", (time.perf_counter() - started) * 1000)
        return True
