"""Which mouth shape shows now: the speaker's mouth timelines on the pipeline clock.

Playback cues each chunk's timeline (``MouthCue``) with the moment its first sample is
heard, some 40-100 ms ahead of now (the feeder's lead and the device's latency), and cues
the silence after it the same way. The avatar asks ``at(now)`` each frame, so a shape
shows with the sound it belongs to, not when its message reached the GUI. Qt-free.
"""

from __future__ import annotations

from app.core.telemetry import MouthCue
from app.core.visemes import Viseme

LEAD_S = 0.03
"""Frames are asked for what sounds this much later: a frame painted now is on screen from
the next refresh for the 30 ms until the next frame, so it shows best what sounds in the
middle of that; and lips move slightly before the sound they make (BT.1359 allows sound
125 ms after the picture, only 45 ms before)."""
KEEP = 64
"""Cues held at most (a reply queues a few; a stalled GUI must not grow the list)."""


class LipSync:
    def __init__(self) -> None:
        self._cues: list[MouthCue] = []

    def cue(self, cue: MouthCue) -> None:
        """Add a cue (any thread order: kept sorted by when it sounds)."""
        self._cues.append(cue)
        self._cues.sort(key=lambda c: c.at)
        del self._cues[:-KEEP]

    def clear(self) -> None:
        self._cues.clear()

    @property
    def active(self) -> bool:
        """A timeline is cued (the shape comes from it, not from the level)."""
        return bool(self._cues)

    def at(self, now: float) -> tuple[Viseme, float]:
        """The shape and opening (0..1) heard at ``now`` + ``LEAD_S`` (closed before the
        first cue and after a closing one); cues that are over are dropped."""
        when = now + LEAD_S
        while len(self._cues) > 1 and self._cues[1].at <= when:
            self._cues.pop(0)
        if not self._cues or self._cues[0].at > when:
            return Viseme.CLOSED, 0.0
        current = self._cues[0]
        into = when - current.at + current.offset
        if current.track is None or (into >= current.track.duration and len(self._cues) == 1):
            self._cues.pop(0)  # over (a closing cue lost with a stopped speaker ends it too)
            return Viseme.CLOSED, 0.0
        return current.track.at(into)
