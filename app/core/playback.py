"""The playback queue between the synthesizer and the audio device.

``pull`` runs on the audio device's callback thread: it only slices arrays under a lock
held for microseconds and posts events with a non-blocking callback. A cancelled turn is
dropped at the next pull, so playback stops within one device block. It also keeps track
of how much of each chunk was played, which gives the heard part of an interrupted reply.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from app.core.emotion import Emotion
from app.core.events import AnswerStarted, FloatAudio, PipelineEvent, PlaybackEnded, PlaybackStarted
from app.core.markup import join_spoken
from app.core.mouth_track import MouthTrack
from app.core.telemetry import ExpressionCue, MouthCue, PlaybackLevel


@dataclass
class _Segment:
    samples: FloatAudio
    text: str
    played: int = 0
    answer: bool = True
    """False for an acknowledgement: it plays like the reply but is never "heard" text."""
    index: int = 0
    emotion: Emotion | None = None
    """The chunk's emotion, cued to the face as its first sample plays."""
    track: MouthTrack | None = None
    """The mouth's timeline for these samples, cued with the sample it starts from."""


@dataclass
class _TurnAudio:
    held: bool
    segments: deque[_Segment] = field(default_factory=deque)
    heard: list[str] = field(default_factory=list)
    finished: bool = False
    started: bool = False
    played: int = 0
    acknowledged: bool = False
    answer_started: bool = False


def heard_part(text: str, fraction: float) -> str:
    """The words of ``text`` a listener heard when ``fraction`` of its audio played."""
    words = text.split()
    return " ".join(words[: int(len(words) * max(0.0, min(1.0, fraction)) + 0.5)])


class PlaybackQueue:
    def __init__(
        self,
        sample_rate: int,
        publish: Callable[[PipelineEvent], None],
        level_interval_s: float = 0.02,
    ) -> None:
        self.sample_rate = sample_rate
        self._publish = publish
        self._lock = threading.Lock()
        self._turns: dict[int, _TurnAudio] = {}
        self._order: deque[int] = deque()
        self._position = 0
        self._clock_offset = 0.0
        """Pipeline clock minus the speaker's own position, from the last ``pull`` that said
        when its block plays: every playback event is stamped on the one clock."""
        self._level_every = max(1, int(level_interval_s * sample_rate))
        self._since_level = 0
        self._last_level = 0.0
        self._mouth_cued: int | None = None
        """The turn whose mouth timeline is cued and still sounding (its end is cued once)."""
        self.speaking = False
        self.paused = False
        """Paused for the user (a possible barge-in): silence out, position kept."""
        self._hold_new_replies = False
        self.sounding_since: float | None = None
        """When the reply now at the front started to sound, on the pipeline clock."""
        self.wake = threading.Event()
        """Set whenever there is audio to play (a speaker feeder sleeps on it when idle)."""
        self.on_begin: Callable[[], None] = lambda: None
        """Called when a reply begins (the listener, resting while idle, looks at once)."""

    # ---- producer side (synthesizer / pipeline threads) ------------------------------

    def begin(self, turn_id: int, held: bool) -> None:
        with self._lock:
            self._turns[turn_id] = _TurnAudio(held=held)
            self._order.append(turn_id)
        self.wake.set()
        self.on_begin()

    def enqueue(self, turn_id: int, samples: FloatAudio, text: str, index: int = 0,
                emotion: Emotion | None = None, track: MouthTrack | None = None) -> None:
        with self._lock:
            turn = self._turns.get(turn_id)
            if turn is not None and samples.size:
                turn.segments.append(_Segment(samples, text, index=index, emotion=emotion,
                                              track=track))
        self.wake.set()

    def acknowledge(self, turn_id: int, samples: FloatAudio, text: str,
                    track: MouthTrack | None = None) -> bool:
        """Queue an acknowledgement to play before the answer, only while none of the
        answer's audio is queued or played (checked under the lock the synthesizer's
        ``enqueue`` takes, so it never lands behind the answer). Returns whether queued."""
        with self._lock:
            turn = self._turns.get(turn_id)
            if turn is None or turn.segments or turn.started or turn.acknowledged:
                return False
            if not samples.size:
                return False
            turn.acknowledged = True
            turn.segments.append(_Segment(samples, text, answer=False, track=track))
        self.wake.set()
        return True

    def finish(self, turn_id: int) -> None:
        """No more audio will come for this turn."""
        ended = None
        with self._lock:
            turn = self._turns.get(turn_id)
            if turn is None:
                return
            turn.finished = True
            if not turn.segments and not turn.held:
                ended = self._end(turn_id, interrupted=False)
        if ended:
            self._publish(ended)

    def release(self, turn_id: int) -> None:
        ended = None
        with self._lock:
            turn = self._turns.get(turn_id)
            if turn is None:
                return
            turn.held = False
            if turn.finished and not turn.segments:
                ended = self._end(turn_id, interrupted=False)
        self.wake.set()
        if ended:
            self._publish(ended)

    def cancel(self, turn_id: int) -> None:
        """Drop the turn's audio now; report what of it was heard."""
        with self._lock:
            if turn_id not in self._turns:
                return
            turn = self._turns[turn_id]
            if turn.segments and turn.segments[0].played and turn.segments[0].answer:
                current = turn.segments[0]
                partial = heard_part(current.text, current.played / current.samples.size)
                if partial:
                    turn.heard.append(partial)
            turn.segments.clear()
            was_playing = bool(self._order) and self._order[0] == turn_id
            ended = self._end(turn_id, interrupted=True)
            if was_playing:
                self.paused = False  # a pause belongs to the reply it held
        self._publish(ended)

    def pause(self) -> None:
        """Stop sound at the next block but keep the place: ``resume`` plays on from it,
        ``cancel`` drops the rest and counts only what was played."""
        with self._lock:
            self.paused = True

    def resume(self) -> None:
        with self._lock:
            self.paused = False
        self.wake.set()

    def hold_new_replies(self, hold: bool) -> None:
        """While the user's voice may be starting, a reply that has not played yet stays
        silent (one already playing is the listener's to pause). Speech that began before
        a reply was audible reopens its turn, so the reply is dropped anyway; started in
        the 30-160 ms before that speech is confirmed, its first syllable was a blip the
        user heard in the middle of their own sentence."""
        with self._lock:
            if hold == self._hold_new_replies:
                return
            self._hold_new_replies = hold
        if not hold:
            self.wake.set()

    def idle(self) -> bool:
        with self._lock:
            return not self._turns

    # ---- consumer side (audio callback) ---------------------------------------------

    def _clock(self, position: int) -> float:
        return position / self.sample_rate + self._clock_offset

    def pull(self, frames: int, plays_at: float | None = None) -> FloatAudio:
        """The next ``frames`` samples; ``plays_at`` is when the first of them will be
        heard, on the pipeline clock (None: the speaker's position is the clock)."""
        out = np.zeros(frames, dtype=np.float32)
        events: list[PipelineEvent] = []
        with self._lock:
            if plays_at is not None:
                self._clock_offset = plays_at - self._position / self.sample_rate
            filled = 0
            while filled < frames and self._order and not self.paused:
                turn_id = self._order[0]
                turn = self._turns[turn_id]
                if turn.held or not turn.segments:
                    if turn.finished and not turn.held:
                        events.append(self._end(turn_id, interrupted=False))
                        continue
                    break
                if not turn.started:
                    if self._hold_new_replies:
                        break
                    turn.started = True
                    start_at = self._clock(self._position + filled)
                    self.sounding_since = start_at
                    events.append(PlaybackStarted(turn_id=turn_id, at=start_at))
                segment = turn.segments[0]
                if turn.acknowledged and segment.answer and not turn.answer_started:
                    turn.answer_started = True
                    answer_at = self._clock(self._position + filled)
                    events.append(AnswerStarted(turn_id=turn_id, at=answer_at))
                if segment.answer and not segment.played:
                    events.append(ExpressionCue(turn_id, segment.index, segment.emotion,
                                                self._clock(self._position + filled)))
                if not segment.played or self._mouth_cued is None:  # a start, or after a pause
                    self._mouth_cued = turn_id
                    events.append(MouthCue(turn_id, segment.index, segment.track,
                                           self._clock(self._position + filled),
                                           segment.played / self.sample_rate))
                take = min(frames - filled, segment.samples.size - segment.played)
                out[filled : filled + take] = segment.samples[
                    segment.played : segment.played + take
                ]
                segment.played += take
                turn.played += take
                filled += take
                if segment.played >= segment.samples.size:
                    if segment.answer:
                        turn.heard.append(segment.text)
                    turn.segments.popleft()
            if filled < frames and self._mouth_cued is not None:  # silence follows: it closes
                events.append(MouthCue(self._mouth_cued, -1, None,
                                       self._clock(self._position + filled)))
                self._mouth_cued = None
            self._position += frames
            self.speaking = filled > 0
            self._since_level += frames
            if self._since_level >= self._level_every:
                self._since_level = 0
                level = float(np.sqrt(np.mean(np.square(out)))) if filled else 0.0
                if level > 0.0 or self._last_level > 0.0:  # silence is reported once
                    events.append(PlaybackLevel(level=level, at=self._clock(self._position)))
                self._last_level = level
        for event in events:
            self._publish(event)
        return out

    def _end(self, turn_id: int, interrupted: bool) -> PlaybackEnded:
        turn = self._turns.pop(turn_id)
        if turn.started:
            self.sounding_since = None
        if turn_id in self._order:
            self._order.remove(turn_id)
        return PlaybackEnded(
            turn_id=turn_id,
            heard_text=join_spoken(turn.heard),
            interrupted=interrupted,
            at=self._clock(self._position),
            played_s=turn.played / self.sample_rate,
        )
