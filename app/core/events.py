"""Typed, frozen events that flow between pipeline stages.

Every event that belongs to a turn carries its ``turn_id``; stages drop events of a
stale turn, which is how a barge-in cancels work in flight. Times are seconds on the
pipeline clock (for ``hanasu run`` that is the input file's own timeline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import numpy.typing as npt

from app.core.emotion import Emotion
from app.core.telemetry import TelemetryEvent

FloatAudio = npt.NDArray[np.float32]


class AssistantState(Enum):
    """What the avatar shows."""

    IDLE = "idle"
    LISTENING = "listening"
    THINKING = "thinking"
    SPEAKING = "speaking"
    MUTED = "muted"
    ERROR = "error"


# ---- listener (VAD + endpointing) --------------------------------------------------


@dataclass(frozen=True)
class SpeechStarted:
    """The user has been speaking for at least the minimum speech duration."""

    at: float
    speech_start: float
    over_assistant: bool = False
    """The assistant was audible (or its echo could still be) when this speech began:
    its words must prove they are the user's before they interrupt or start a turn."""


@dataclass(frozen=True)
class SpeechPaused:
    """The user went quiet; the turn may be over. Carries the utterance so far."""

    at: float
    speech_start: float
    speech_end: float
    audio: FloatAudio = field(repr=False)
    audio_end: float | None = None
    """Where ``audio`` ends on the listener's sample stream (seconds): joining utterances
    and naming the pause need sample accuracy, not the mapped time (None: ``at``)."""
    score_follows: bool = False
    """An ``EndOfTurnScore`` for this pause follows (an end-of-turn model is running)."""


@dataclass(frozen=True)
class SpeechResumed:
    """The user spoke again before the end-of-turn silence elapsed."""

    at: float
    over_assistant: bool = False
    """The listener paused the reply again for it (``voice_pause``): the machine holds it."""


@dataclass(frozen=True)
class UtteranceEnded:
    """End of turn confirmed: the silence lasted the end-of-turn duration."""

    at: float
    speech_start: float
    speech_end: float
    audio: FloatAudio = field(repr=False)
    audio_end: float | None = None
    """As ``SpeechPaused.audio_end``."""


# ---- turn work ---------------------------------------------------------------------


@dataclass(frozen=True)
class TurnStarted:
    """Work on a user utterance began; ``speculative`` while the user may still go on."""

    turn_id: int
    at: float
    speech_start: float
    speech_end: float
    speculative: bool


@dataclass(frozen=True)
class TurnConfirmed:
    """The end of the user's turn was confirmed; the reply may now be heard."""

    turn_id: int
    at: float
    speech_start: float
    speech_end: float


@dataclass(frozen=True)
class TurnCancelled:
    """A turn was dropped: the user resumed (speculative) or barged in."""

    turn_id: int
    at: float
    reason: str


@dataclass(frozen=True)
class Transcript:
    turn_id: int
    text: str
    at: float
    language: str | None = None
    """Base code of the language heard ("en", "ja", "zh"); None when unknown or no words."""
    other_voice: bool = False
    """Not an enrolled voice, and the companion's name was not said (``voice_gate``): not
    for the companion. Its words are not passed on (``text`` is empty)."""


@dataclass(frozen=True)
class ReplyChunk:
    """A speakable piece of the reply handed to TTS (a clause or a sentence)."""

    turn_id: int
    index: int
    text: str
    at: float
    language: str | None = None
    """The language the reply is in (None: the persona's main language); the synthesizer
    still reads each chunk's script, so CJK text is never spoken by an English voice."""
    emotion: Emotion | None = None
    """How it is said, from the model's tag (None: the persona's resting face)."""


@dataclass(frozen=True)
class ReplyFinished:
    """The LLM finished (or was cancelled); ``text`` is everything it generated."""

    turn_id: int
    text: str
    chunks: int
    at: float
    cancelled: bool = False


@dataclass(frozen=True)
class SpeechAudio:
    """Synthesized audio for one reply chunk, at the synthesizer's sample rate."""

    turn_id: int
    index: int
    text: str
    samples: FloatAudio = field(repr=False)
    sample_rate: int
    at: float
    last: bool = False


@dataclass(frozen=True)
class PlaybackStarted:
    turn_id: int
    at: float


@dataclass(frozen=True)
class Acknowledged:
    """The answer was late: a short acknowledgement ("Hmm,") was queued to play first.
    It is never part of the reply's text nor of what the user heard in the history."""

    turn_id: int
    text: str
    at: float


@dataclass(frozen=True)
class AnswerStarted:
    """The first sample of the answer itself played, after an acknowledgement (without
    one, the answer's first sample is the turn's ``PlaybackStarted``)."""

    turn_id: int
    at: float


@dataclass(frozen=True)
class PlaybackEnded:
    """The speaker stopped playing a turn; ``heard_text`` is what the user heard."""

    turn_id: int
    heard_text: str
    interrupted: bool
    at: float
    played_s: float = 0.0
    """Seconds of the turn's audio that reached the speaker (a duration: no clock)."""


@dataclass(frozen=True)
class BargeIn:
    turn_id: int
    at: float


@dataclass(frozen=True)
class StateChanged:
    state: AssistantState
    at: float


@dataclass(frozen=True)
class StageFailed:
    """A stage hit an error it could not recover from within the turn."""

    stage: str
    message: str
    turn_id: int | None = None


@dataclass(frozen=True)
class PlaybackPaused:
    """The listener paused the reply at the first confident frames of the user's voice
    (``speech_start`` is their onset): the fast half of a barge-in."""

    at: float
    speech_start: float


@dataclass(frozen=True)
class PlaybackResumed:
    """The reply plays on: the voice was a blip, an echo, or words that were not for it."""

    at: float


@dataclass(frozen=True)
class EndOfTurnScore:
    """The audio model's probability that the user finished, at the pause ending at ``at``."""

    at: float
    probability: float


@dataclass(frozen=True)
class EndOfTurnDecided:
    """The end-of-turn call for a pause, from the audio model and the transcript so far."""

    turn_id: int
    at: float
    probability: float | None
    text_verdict: str
    end_now: bool


@dataclass(frozen=True)
class TurnCommitted:
    """A turn is over; what goes into history (the heard part of the reply only)."""

    turn_id: int
    user_text: str
    heard_text: str
    conversation_key: object = None
    """The caller's key of the conversation the turn started in (``load_conversation``):
    observers on other threads file it there without asking the controller."""


ControlEvent = (
    SpeechStarted
    | SpeechPaused
    | SpeechResumed
    | UtteranceEnded
    | TurnStarted
    | TurnConfirmed
    | TurnCancelled
    | Transcript
    | ReplyChunk
    | ReplyFinished
    | SpeechAudio
    | Acknowledged
    | AnswerStarted
    | PlaybackStarted
    | PlaybackEnded
    | BargeIn
    | StateChanged
    | StageFailed
    | TurnCommitted
    | EndOfTurnScore
    | EndOfTurnDecided
    | PlaybackPaused
    | PlaybackResumed
)
"""What the turn machine and the controller decide on."""

PipelineEvent = ControlEvent | TelemetryEvent
"""Everything a stage publishes."""
