"""One vocabulary: every command the turn machine emits is executed by the controller, and
every stage job reaches the worker whose job type lists it (no look-alike job classes)."""

from __future__ import annotations

import typing

import numpy as np

import app.core.stage_jobs as stage_jobs
import app.core.stages as stages
import app.core.synthesizer as synthesizer
import app.core.transcriber as transcriber
import app.core.turn_commands as turn_commands
from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.acknowledgement import AcknowledgementSounds, PrepareAcknowledgements
from app.core.events import ReplyChunk, SpeechStarted
from app.core.listener_jobs import ListenerJob, MicBlock, SetListening, SetTap
from app.core.pipeline import Engines, VoicePipeline
from app.core.runtime.router import StageJob
from app.core.turn_commands import (
    CancelTurn,
    JudgeEndOfTurn,
    Publish,
    ReleaseTurn,
    ResumePlayback,
    StartTurn,
)
from app.core.utterance_text import EndOfTurnCall
from app.core.voice_gate import VoiceGate
from app.core.worker import _Wake


def _pipeline() -> VoicePipeline:
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(), FakeLanguageModel(),
                      FakeSynthesizer())
    return VoicePipeline(engines, "You are Hana.")


def test_no_stage_job_repacks_a_command() -> None:
    assert not hasattr(stages, "TranscribeJob")
    assert not hasattr(stages, "RespondJob")


def _sample(job_type: type) -> StageJob:
    """One real instance of each stage job type."""
    audio = np.zeros(160, dtype=np.float32)
    samples: dict[type, StageJob] = {
        StartTurn: StartTurn(1, audio, held=False),
        stage_jobs.SetLanguages: stage_jobs.SetLanguages(("en",)),
        turn_commands.Respond: turn_commands.Respond(1, []),
        stage_jobs.WarmJob: stage_jobs.WarmJob([]),
        stage_jobs.ExtractJob: stage_jobs.ExtractJob([], 0, lambda _text: None),
        stage_jobs.SetReplyOptions: stage_jobs.SetReplyOptions(None, None),
        stage_jobs.UseTools: stage_jobs.UseTools((), None),
        ReplyChunk: ReplyChunk(1, 0, "Hello.", 0.0),
        stage_jobs.EndOfReply: stage_jobs.EndOfReply(1),
        stage_jobs.SetVoice: stage_jobs.SetVoice("af_heart", 1.0),
        PrepareAcknowledgements: PrepareAcknowledgements(AcknowledgementSounds(), (), 1.2),
        JudgeEndOfTurn: JudgeEndOfTurn(0.5, EndOfTurnCall.END_NOW),
        SetListening: SetListening(False),
        SetTap: SetTap(None),
        stage_jobs.SetVoiceGate: stage_jobs.SetVoiceGate(VoiceGate()),
        stage_jobs.LearnVoice: stage_jobs.LearnVoice(True),
        stage_jobs.TranscribeAhead: stage_jobs.TranscribeAhead(np.zeros(512, np.float32)),
    }
    return samples[job_type]


def test_every_stage_job_reaches_exactly_the_workers_that_take_it() -> None:
    """The responder's chunks and the GUI's voice and language switches go through the
    same router as the turn machine's commands, to the worker whose job type lists them."""
    takes = {
        "transcriber": set(typing.get_args(transcriber.TranscriberJob)),
        "responder": set(typing.get_args(stages.ResponderJob)),
        "synthesizer": set(typing.get_args(synthesizer.SynthesizerJob)),
        "listener": set(typing.get_args(ListenerJob)) - {MicBlock},
    }
    assert set(typing.get_args(StageJob)) == set().union(*takes.values())
    for job_type in typing.get_args(StageJob):
        pipeline = _pipeline()
        job = _sample(job_type)
        pipeline.send(job)
        for name, types in takes.items():
            inbox = getattr(pipeline, name).inbox
            got = [inbox.get_nowait() for _ in range(inbox.qsize())]
            assert got == ([job] if job_type in types else []), (job_type, name)


def test_every_command_of_the_turn_machine_is_executed() -> None:
    """Each command type has its effect (a missing case would fail mypy's assert_never
    and, at run time, raise here)."""
    pipeline = _pipeline()
    controller = pipeline.controller
    seen: list[object] = []
    pipeline.add_observer(seen.append)
    event = SpeechStarted(at=0.0, speech_start=0.0)
    controller.execute([Publish(event)])
    assert seen == []  # beside the decisions: delivered by the telemetry thread
    pipeline.telemetry.drain()
    assert seen == [event]
    controller.execute([StartTurn(5, np.zeros(160, dtype=np.float32), held=True)])
    assert pipeline.live.turn_id == 5
    assert isinstance(pipeline.transcriber.inbox.get_nowait(), StartTurn)
    # its playback began, which wakes a listener resting in its idle pause
    assert isinstance(pipeline.listener.inbox.get_nowait(), _Wake)
    controller.execute([ReleaseTurn(5), ResumePlayback()])
    controller.execute([JudgeEndOfTurn(0.5, EndOfTurnCall.END_NOW)])
    assert isinstance(pipeline.listener.inbox.get_nowait(), JudgeEndOfTurn)
    controller.execute([turn_commands.Respond(5, [])])
    assert isinstance(pipeline.responder.inbox.get_nowait(), turn_commands.Respond)
    controller.execute([CancelTurn(5)])
    assert pipeline.live.turn_id is None


def test_a_reply_chunk_reaches_the_voice_through_the_router() -> None:
    pipeline = _pipeline()
    chunk = ReplyChunk(1, 0, "Hello.", 0.0)
    pipeline.send(chunk)
    pipeline.send(stage_jobs.EndOfReply(1))
    assert pipeline.synthesizer.inbox.get_nowait() is chunk
    assert isinstance(pipeline.synthesizer.inbox.get_nowait(), stage_jobs.EndOfReply)
    assert pipeline.responder.inbox.empty() and pipeline.transcriber.inbox.empty()
