"""The listener's sample stream mapped onto the pipeline clock.

The endpointer counts samples (``StreamTime``: seconds of input received); every event
leaves the listener on the pipeline clock, which playback and the turn machine use. The
two are different types so one cannot be passed for the other.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NewType

from app.core.events import (
    PipelineEvent,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
    UtteranceEnded,
)

StreamTime = NewType("StreamTime", float)
"""Seconds on the listener's input stream (samples counted / rate), not the pipeline clock."""

CLOCK_REANCHOR_S = 0.1
"""A microphone block this much later than the stream predicts re-anchors the mapping."""


class StreamClock:
    def __init__(self, output_delay_s: float = 0.0) -> None:
        self.output_delay_s = output_delay_s
        """How far the canceller's output (what the endpointer counts) runs behind capture."""
        self._offset: float | None = None
        """Pipeline clock minus stream time; None until a block came with a capture time."""

    @property
    def anchored(self) -> bool:
        return self._offset is not None

    def observe(self, captured_at: float, stream_end: StreamTime) -> None:
        """A block whose last sample (``stream_end``) was captured at ``captured_at``.
        Callbacks run a little after the capture, so the earliest mapping is the truest; a
        jump of over 0.1 s (a device reopened, a long stall) re-anchors it."""
        offset = captured_at - stream_end - self.output_delay_s
        known = self._offset
        if known is None or offset < known or offset - known > CLOCK_REANCHOR_S:
            self._offset = offset

    def to_pipeline(self, stream_s: StreamTime) -> float:
        """A time on the input stream, on the pipeline clock."""
        return stream_s + (self._offset or 0.0)

    def recorded_at(self, raw_stream_s: float) -> float:
        """When the microphone recorded the sample ``raw_stream_s`` into its stream (before
        the canceller's delay), on the pipeline clock."""
        return raw_stream_s + (self._offset or 0.0) + self.output_delay_s

    def stamp(self, event: PipelineEvent, score_follows: bool) -> PipelineEvent:
        """The endpointer's event (stream times) on the pipeline clock; a pause also says
        whether an end-of-turn score follows, and keeps where its audio ends on the stream."""
        if not self.anchored:
            if isinstance(event, SpeechPaused) and score_follows:
                return replace(event, score_follows=True)
            return event
        at = self.to_pipeline
        match event:
            case SpeechPaused() | UtteranceEnded():
                stamped = replace(event, at=at(StreamTime(event.at)),
                                  speech_start=at(StreamTime(event.speech_start)),
                                  speech_end=at(StreamTime(event.speech_end)),
                                  audio_end=event.at if event.audio_end is None
                                  else event.audio_end)
                if isinstance(stamped, SpeechPaused):
                    return replace(stamped, score_follows=score_follows)
                return stamped
            case SpeechStarted():
                return replace(event, at=at(StreamTime(event.at)),
                               speech_start=at(StreamTime(event.speech_start)))
            case SpeechResumed():
                return replace(event, at=at(StreamTime(event.at)))
            case _:
                return event
