"""The one table every stage job is handed through, from whichever thread makes it.

The turn machine's commands double as the stages' jobs (``StartTurn`` for the recognizer,
``Respond`` for the responder), and the responder hands its chunks straight to the voice
through here, with no hop through the controller. Microphone and speaker blocks are the
listener's input stream, not jobs: they keep their own bounded path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

from app.core.acknowledgement import PrepareAcknowledgements
from app.core.events import ReplyChunk
from app.core.listener_jobs import SetListening, SetTap
from app.core.stage_jobs import (
    EndOfReply,
    ExtractJob,
    LearnVoice,
    SetLanguages,
    SetReplyOptions,
    SetVoice,
    SetVoiceGate,
    TranscribeAhead,
    UseTools,
    WarmJob,
)
from app.core.turn_commands import JudgeEndOfTurn, Respond, StartTurn

if TYPE_CHECKING:
    from app.core.runtime.wiring import Stages

StageJob = (
    StartTurn
    | TranscribeAhead
    | SetLanguages
    | Respond
    | WarmJob
    | ExtractJob
    | SetReplyOptions
    | UseTools
    | ReplyChunk
    | EndOfReply
    | SetVoice
    | PrepareAcknowledgements
    | JudgeEndOfTurn
    | SetListening
    | SetVoiceGate
    | LearnVoice
    | SetTap
)


class JobRouter:
    """Delivers each job to the worker(s) that own it; safe to call from any thread."""

    def __init__(self) -> None:
        self._stages: Stages | None = None

    def connect(self, stages: Stages) -> None:
        self._stages = stages

    def send(self, job: StageJob) -> None:
        stages = self._stages
        assert stages is not None, "JobRouter.connect() first"
        hear, respond = stages.transcriber.inbox.put, stages.responder.inbox.put
        speak, listen = stages.synthesizer.inbox.put, stages.listener.inbox.put
        match job:
            case StartTurn() | TranscribeAhead() | SetVoiceGate() | LearnVoice():
                hear(job)
            case SetLanguages():  # the recognizer pins its language, the voices load
                hear(job)
                speak(job)
            case Respond() | WarmJob() | ExtractJob() | SetReplyOptions() | UseTools():
                respond(job)
            case ReplyChunk() | EndOfReply() | SetVoice() | PrepareAcknowledgements():
                speak(job)
            case JudgeEndOfTurn() | SetListening() | SetTap():
                listen(job)
            case _:
                assert_never(job)
