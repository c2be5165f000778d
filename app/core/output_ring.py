"""The speaker's side of the audio callback: a prepared buffer, so the callback only copies.

A device's output callback runs on a real-time thread: it must not wait for a lock that a
synthesizer or the controller holds, allocate buffers or build events. ``OutputFeeder``
does all of that on its own thread (it pulls the playback queue a couple of blocks ahead
of the device) and ``OutputRing`` hands the samples over: one writer, one reader, two
counters, each written by one side only, a counter moved only after its samples are in
place. The cost is the feeder's lead (the app keeps 40 ms: twice the device's 20 ms
callback) on a pause or a barge-in, still well inside the 150 ms barge-in budget.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from app.core.events import FloatAudio

log = logging.getLogger(__name__)

IDLE_WAIT_S = 0.5
"""An idle feeder looks again at least this often (a missed wake-up costs at most this)."""


class OutputRing:
    """Single-producer, single-consumer ring of float32 samples."""

    def __init__(self, capacity: int, sample_rate: int) -> None:
        self._buffer = np.zeros(capacity, dtype=np.float32)
        self._rate = sample_rate
        self.heard_origin: float | None = None
        """When sample 0 would have been heard, from the reader's last word on when it
        plays (``read_into(out, plays_at)``): sample i is heard at origin + i / rate, until
        the ring runs dry again. One float, so the writer never reads half an update."""
        self._capacity = capacity
        self._written = 0
        """Samples written so far (the feeder's counter)."""
        self._read = 0
        """Samples read so far (the callback's counter)."""
        self.writer_idle = True
        """Set by the writer while it sleeps for want of audio (see ``idle``)."""
        self.on_refill: Callable[[], None] | None = None
        """Called by the writer when it wakes with audio to write after an idle spell (on
        its own thread, before the first write): a reader that paused its device while
        idle (``DeviceAudio``) starts it again."""
        self.starved = 0
        """Callbacks that found fewer samples than they needed (silence filled in; while
        the app is idle that is every callback, by design)."""

    def buffered(self) -> int:
        return self._written - self._read

    def idle(self) -> bool:
        """Nothing buffered and the writer asleep: a reader may pause until ``on_refill``."""
        return self.writer_idle and self.buffered() == 0

    def write(self, samples: FloatAudio) -> int:
        """Feeder side: copy what fits; returns how many samples were taken."""
        count = min(samples.size, self._capacity - self.buffered())
        start = self._written % self._capacity
        first = min(count, self._capacity - start)
        self._buffer[start:start + first] = samples[:first]
        self._buffer[:count - first] = samples[first:count]
        self._written += count  # published after the samples are in place
        return count

    def heard_at(self, index: int) -> float | None:
        """When sample ``index`` (counted from the first written) will be heard, if no
        shortfall comes first; None when the reader never said when it plays."""
        origin = self.heard_origin
        return None if origin is None else origin + index / self._rate

    @property
    def written(self) -> int:
        return self._written

    def read_into(self, out: FloatAudio, plays_at: float | None = None) -> int:
        """Callback side: copy into ``out`` (silence where nothing is ready); ``plays_at``
        is when ``out[0]`` is heard, if the reader knows. No lock, no allocation beyond
        slice views, no events."""
        wanted = int(out.shape[0])
        count = min(wanted, self._written - self._read)
        start = self._read % self._capacity
        first = min(count, self._capacity - start)
        out[:first] = self._buffer[start:start + first]
        out[first:count] = self._buffer[:count - first]
        if count < wanted:
            out[count:] = 0.0
            self.starved += 1
        self._read += count
        if plays_at is not None:
            self.heard_origin = plays_at + (wanted - self._read) / self._rate
        return count


class OutputFeeder:
    """Keeps ``ring`` ``lead`` samples ahead of the device, pulling ``pull(frames,
    plays_at)`` (the pipeline's playback) in ``block``-sample steps on its own thread."""

    def __init__(
        self,
        pull: Callable[[int, float | None], FloatAudio],
        now: Callable[[], float],
        sample_rate: int,
        block: int,
        lead_blocks: int = 2,
        has_work: Callable[[], bool] = lambda: True,
        wake: threading.Event | None = None,
    ) -> None:
        self.ring = OutputRing(block * (lead_blocks + 8), sample_rate)
        self._pull = pull
        self._now = now
        self._rate = sample_rate
        self._block = block
        self._lead = block * lead_blocks
        self._has_work = has_work
        self._wake = wake or threading.Event()
        """Set when the playback gets something to play: an idle feeder sleeps until then
        (the callback plays silence meanwhile), so an idle app does not tick 200 times a
        second."""
        self._stop = threading.Event()
        self._next_heard: float | None = None
        """When the sample after the last one written is heard, if the ring never ran dry."""
        self.idle_waits = 0
        """Times the feeder went to sleep for want of audio (tests, diagnostics)."""
        self._thread = threading.Thread(target=self._run, name="speaker-feed", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(2)

    def top_up(self) -> None:
        """Fill the ring to the lead; each block is stamped with when it will be heard:
        right after the block before it while the ring has not run dry, else by the
        reader's word on when it plays (or, from a reader that gives none, by now)."""
        while self.ring.buffered() < self._lead:
            follows = self._next_heard if self.ring.buffered() > 0 else None
            plays_at = self._heard_after_dry_spell() if follows is None else follows
            block = self._pull(self._block, plays_at)
            self.ring.write(block)
            self._next_heard = plays_at + block.size / self._rate

    def _heard_after_dry_spell(self) -> float:
        now = self._now()
        heard = self.ring.heard_at(self.ring.written)
        return now if heard is None else max(heard, now)

    def _refill(self) -> None:
        """Leaving an idle spell: tell the reader (its device may be paused)."""
        self.ring.writer_idle = False  # before the call: a reader pausing now sees it
        wake = self.ring.on_refill
        if wake is not None:
            try:
                wake()
            except Exception:
                log.exception("waking the speaker failed")

    def _run(self) -> None:
        pace = self._block / self._rate / 2
        while not self._stop.is_set():
            if not self._has_work():
                # Nothing to play: let the device drain what is in the ring and play
                # silence (the callback fills it in) instead of topping up with silence
                # 100 times a second. Clear before the second look, so a ``wake.set()``
                # after it is never lost; the first block of a reply then lands in an
                # empty ring, i.e. it is heard no later than while topping up.
                self._wake.clear()
                if not self._has_work():
                    self.ring.writer_idle = True
                    self.idle_waits += 1
                    self._wake.wait(IDLE_WAIT_S)
                    continue
            if self.ring.writer_idle:
                self._refill()
            try:
                self.top_up()
            except Exception:  # the speaker keeps playing silence; the next round retries
                log.exception("speaker feed failed")
            self._stop.wait(pace)
