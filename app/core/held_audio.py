"""A turn's utterance as the turn machine keeps it, and joining two of them into one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.core.events import FloatAudio, SpeechPaused, UtteranceEnded


@dataclass(frozen=True)
class HeldAudio:
    """A turn's utterance and where it ends on the listener's clock (seconds of input)."""

    samples: FloatAudio
    end: float
    spoken: tuple[float, float] | None = None
    """Where its speech began and ended (the events' clock), kept for a reopened turn's
    words: asked again alone, their turn is timed from the user's words, not from then."""


@dataclass
class CarriedWords:
    """The words of a reopened turn, waiting to join the user's next utterance."""

    sample_rate: int
    within_s: float
    """They join it only if it starts within this long after they ended."""
    audio: HeldAudio | None = None

    def onto(self, utterance: HeldAudio) -> HeldAudio:
        """``utterance`` with the carried words in front; words carried too long ago are
        dropped instead."""
        carried = self.audio
        if carried is None:
            return utterance
        starts = utterance.end - utterance.samples.size / self.sample_rate
        if starts - carried.end <= self.within_s:
            return join_utterances(carried, utterance, self.sample_rate)
        self.audio = None
        return utterance


def stream_end(event: SpeechPaused | UtteranceEnded) -> float:
    """Where the event's audio ends on the listener's sample stream (joins, pause names)."""
    return event.at if event.audio_end is None else event.audio_end


def join_utterances(earlier: HeldAudio, later: HeldAudio, sample_rate: int) -> HeldAudio:
    """One utterance from two stretches of the same microphone stream.

    Both end at a known point of the listener's clock, so the later one's start is known
    too: audio the two share (the later one's pre-roll repeats the end of the earlier one)
    is kept once, and a real gap between them is kept as silence (at most 0.5 s, so Whisper
    hears a pause, not a new sentence)."""
    later_start = later.end - later.samples.size / sample_rate
    overlap = round((earlier.end - later_start) * sample_rate)
    if overlap >= 0:
        tail = later.samples[min(overlap, later.samples.size):]
        joined = np.concatenate([earlier.samples, tail])
    else:
        gap = np.zeros(min(-overlap, sample_rate // 2), dtype=np.float32)
        joined = np.concatenate([earlier.samples, gap, later.samples])
    return HeldAudio(joined.astype(np.float32, copy=False), later.end)
