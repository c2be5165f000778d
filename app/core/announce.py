"""Speaking a fixed text (a persona's greeting) the way a reply is spoken.

The text goes to the same synthesizer and playback queue as a reply, so the
avatar's mouth moves with it and the echo canceller hears it, under turn ids of its own
(negative, so never one of the turn machine's). It is not a turn: nothing is committed to
the conversation. When the user starts talking over it, it stops like a barged-in reply.
Runs on the pipeline's controller thread.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from app.core.events import PipelineEvent, PlaybackEnded, ReplyChunk, SpeechStarted
from app.core.playback import PlaybackQueue
from app.core.ports import Clock
from app.core.sentences import SentenceGate
from app.core.stage_jobs import EndOfReply
from app.core.synthesizer import SynthesizerJob
from app.core.worker import LiveTurn


class Announcer:
    def __init__(
        self,
        live: LiveTurn,
        playback: PlaybackQueue,
        to_synthesizer: Callable[[SynthesizerJob], None],
        clock: Clock,
    ) -> None:
        self.live, self.playback, self.clock = live, playback, clock
        self.to_synthesizer = to_synthesizer
        self.current: int | None = None
        self._next_id = -1

    def say(self, text: str) -> int | None:
        """Speak ``text`` now, replacing anything this announcer is still saying; an
        empty text just stops. Returns the turn id it plays under."""
        self.stop()
        gate = SentenceGate()
        chunks = [*gate.push(text), *gate.flush()]
        if not chunks:
            return None
        turn_id = self._next_id
        self._next_id -= 1
        self.current = turn_id
        self.live.turn_id = turn_id
        self.playback.begin(turn_id, held=False)
        for index, chunk in enumerate(chunks):
            self.to_synthesizer(ReplyChunk(turn_id, index, chunk, self.clock.now()))
        self.to_synthesizer(EndOfReply(turn_id))
        return turn_id

    def stop(self) -> None:
        turn_id, self.current = self.current, None
        if turn_id is None:
            return
        if self.live.turn_id == turn_id:
            self.live.turn_id = None
        self.playback.cancel(turn_id)

    def observe(self, event: PipelineEvent, barge_in: bool) -> None:
        """The user talking over it stops it; its end frees the live slot."""
        if isinstance(event, SpeechStarted) and barge_in and self.current is not None:
            self.stop()
        elif isinstance(event, PlaybackEnded) and event.turn_id == self.current:
            self.current = None
            if self.live.turn_id == event.turn_id:
                self.live.turn_id = None


class FirstWords:
    """What the companion says unasked (a timer that rang): queued until a quiet moment,
    in order; shown instead while muted; said again when talked over before a word was
    heard; what was heard goes into the history like a reply (the controller commits)."""

    POLL_S = 0.25
    """How often a waiting text looks for a quiet moment."""

    def __init__(self, announcer: Announcer) -> None:
        self.announcer = announcer
        self.waiting: deque[str] = deque()
        self._speaking: dict[int, str] = {}

    def add(self, text: str) -> None:
        self.waiting.append(text)

    def wait_s(self) -> float | None:
        return self.POLL_S if self.waiting else None

    def speak(self, quiet: bool, muted: bool) -> str | None:
        """Say the next text if it is quiet; returns it instead when muted (to show)."""
        if not self.waiting or self.announcer.current is not None:
            return None
        if muted:
            return self.waiting.popleft()
        if quiet:
            text = self.waiting.popleft()
            turn_id = self.announcer.say(text)
            if turn_id is not None:
                self._speaking[turn_id] = text
        return None

    def ended(self, event: PlaybackEnded) -> str | None:
        """What was heard of a text said first (None: not one, or talked over at once,
        and then it waits to be said again)."""
        text = self._speaking.pop(event.turn_id, None)
        if text is None:
            return None
        heard = event.heard_text.strip()
        if not heard:
            self.waiting.appendleft(text)
        return heard or None
