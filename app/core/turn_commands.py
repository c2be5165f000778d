"""What the turn machine tells the controller to do: its commands, one type each.

The commands double as the stages' jobs (``StartTurn`` for the recognizer, ``Respond`` for
the responder), so each meaning has one name from the machine to the worker.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.events import FloatAudio, PipelineEvent
from app.core.ports import ChatMessage
from app.core.utterance_text import EndOfTurnCall


@dataclass(frozen=True)
class StartTurn:
    turn_id: int
    audio: FloatAudio
    held: bool
    typed: str | None = None
    """Words typed in the window: the transcriber passes them on instead of listening."""
    voice_from: int = 0
    """Where this utterance's own speech begins in ``audio``: a reopened turn's words in
    front of it are left out when its voice is judged (``voice_gate``)."""
    ends_at: float | None = None
    """Where ``audio`` ends on the listener's clock (None: typed, or words carried alone)."""


@dataclass(frozen=True)
class ReleaseTurn:
    turn_id: int


@dataclass(frozen=True)
class CancelTurn:
    turn_id: int


@dataclass(frozen=True)
class Respond:
    turn_id: int
    messages: list[ChatMessage]
    language: str | None = None
    """The language to answer in (the pipeline fills it from what was heard)."""
    scripted: str | None = None
    """The reply decided before the model was asked (a built-in tool's answer): spoken
    and committed like the model's would be, without asking it."""


@dataclass(frozen=True)
class Publish:
    event: PipelineEvent


@dataclass(frozen=True)
class ResumePlayback:
    """Play on the reply the listener paused: what interrupted it was not the user (or
    there is no reply the pause was for)."""


@dataclass(frozen=True)
class JudgeEndOfTurn:
    """For the listener: end the turn at the pause reported at ``pause_at`` now, after the
    usual silence, or after a longer one. Ignored there if the user has gone on since."""

    pause_at: float
    call: EndOfTurnCall

    @property
    def end_now(self) -> bool:
        return self.call is EndOfTurnCall.END_NOW


Command = (
    StartTurn | ReleaseTurn | CancelTurn | Respond | Publish | JudgeEndOfTurn | ResumePlayback
)


REOPENED = "reopened: the user went on"
USER_RESUMED = "user resumed"
"""A speculative turn dropped because the user spoke on before it was confirmed."""
"""``TurnCancelled.reason`` of a turn whose words were carried into the next one."""
NOT_THE_USER = "not the user: echo, noise or a backchannel"
"""``TurnCancelled.reason`` of speech over the assistant whose words were not a request."""
OTHER_VOICE = "another voice: not enrolled, not called by name"
"""``TurnCancelled.reason`` of a turn in a voice that is not enrolled (``voice_gate``)."""
