"""Telemetry: what the meters, the transcript view and the recorder watch, not decisions.

Tokens, levels, prefix reuse, timings and engine notices never change what the turn machine
does; their own union says which events a decision may depend on (``events.ControlEvent``)
and which are only shown or recorded (``TelemetryEvent``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.emotion import Emotion

if TYPE_CHECKING:
    from app.core.metrics import TurnTimeline
    from app.core.mouth_track import MouthTrack
    from app.core.voice_gate import VoicePrint


@dataclass(frozen=True)
class TokenDelta:
    turn_id: int
    text: str
    at: float
    first: bool = False


@dataclass(frozen=True)
class PrefixReuse:
    """How much of the prompt llama.cpp found already evaluated in its KV cache."""

    turn_id: int
    prompt_tokens: int
    reused_tokens: int

    @property
    def reused(self) -> bool:
        return self.reused_tokens > 0


@dataclass(frozen=True)
class PlaybackLevel:
    """RMS level of what the speaker is playing now, for the avatar's mouth."""

    level: float
    at: float


@dataclass(frozen=True)
class ExpressionCue:
    """A reply chunk started to sound at ``at`` (the pipeline clock): the face takes the
    chunk's emotion (None: the persona's resting face) until the next cue or the end."""

    turn_id: int
    index: int
    emotion: Emotion | None
    at: float


@dataclass(frozen=True)
class MouthCue:
    """The speaker plays ``track`` from ``offset`` seconds into it at ``at`` (the pipeline
    clock); None: nothing sounds from ``at`` on (a pause, a gap, the reply's end), so the
    mouth closes then and not when the message happens to arrive (``index`` is then -1:
    the silence belongs to no chunk)."""

    turn_id: int
    index: int
    track: MouthTrack | None
    at: float
    offset: float = 0.0


@dataclass(frozen=True)
class InputLevel:
    """Microphone RMS level, for the level meter."""

    level: float
    at: float


def level_db(level: float) -> float:
    """A mic RMS on the level meter's scale: dB clamped to -60..0 (all below -60 looks alike)."""
    return min(0.0, max(-60.0, 20.0 * math.log10(max(level, 1e-6))))


@dataclass(frozen=True)
class TurnTimed:
    """A copy of a finished turn's timeline, for the latency HUD: observers get numbers,
    never the recorder the controller thread is still writing."""

    turn_id: int
    timeline: TurnTimeline


@dataclass(frozen=True)
class EngineNotice:
    """A one-line problem an engine found while working that the user should see once
    (a language's voice that could not load and what speaks instead)."""

    message: str
    at: float


@dataclass(frozen=True)
class ReplyFailed:
    """The language model (or its server) failed while answering ``turn_id``; the persona
    said an apology instead (``app.core.apology``). ``message`` is one line for the user:
    a notice in the window, a line on stderr from ``hanasu run``."""

    turn_id: int
    message: str
    at: float


@dataclass(frozen=True)
class VoiceLearnt:
    """The user's voice, learnt from their requests (``voice_learning``): the app stores it
    and puts it to use like an enrolled one (``VoicePipeline.use_voice_prints``)."""

    voice: VoicePrint
    at: float


TelemetryEvent = (TokenDelta | PrefixReuse | PlaybackLevel | ExpressionCue | MouthCue
                  | InputLevel | TurnTimed | EngineNotice | ReplyFailed | VoiceLearnt)
