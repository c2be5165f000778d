"""One vocabulary: every command the turn machine emits has one route in the pipeline, and
the stages take those commands as their jobs (no look-alike job classes)."""

from __future__ import annotations

import typing

import app.core.stages as stages
from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.events import ReplyChunk
from app.core.listener import ListenerJob, MicBlock, PlayedBlock
from app.core.pipeline import Engines, VoicePipeline
from app.core.turn import Command


def test_every_command_has_exactly_one_route() -> None:
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(), FakeLanguageModel(),
                      FakeSynthesizer())
    pipeline = VoicePipeline(engines, "You are Hana.")
    commands = set(typing.get_args(Command))
    assert set(pipeline._routes()) == commands


def test_no_stage_job_repacks_a_command() -> None:
    assert not hasattr(stages, "TranscribeJob")
    assert not hasattr(stages, "RespondJob")


def _pipeline() -> VoicePipeline:
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(), FakeLanguageModel(),
                      FakeSynthesizer())
    return VoicePipeline(engines, "You are Hana.")


def test_every_stage_job_has_a_route_to_the_worker_that_takes_it() -> None:
    """The responder's chunks and the GUI's voice and language switches go through the
    same table as the turn machine's commands, to the worker whose job type lists them."""
    pipeline = _pipeline()
    workers = {
        pipeline.transcriber: set(typing.get_args(stages.StartTurn | stages.SetLanguages)),
        pipeline.responder: set(typing.get_args(stages.ResponderJob)),
        pipeline.synthesizer: set(typing.get_args(stages.SynthesizerJob)),
        pipeline.listener: set(typing.get_args(ListenerJob)) - {MicBlock, PlayedBlock},
    }
    routed = pipeline._job_routes()
    assert set(routed) == set().union(*workers.values())
    for job_type, deliveries in routed.items():
        owners = {worker for worker, takes in workers.items() if job_type in takes}
        assert {deliver.__self__ for deliver in deliveries} == {  # type: ignore[attr-defined]
            worker.inbox for worker in owners}, job_type


def test_a_reply_chunk_reaches_the_voice_through_the_table() -> None:
    pipeline = _pipeline()
    chunk = ReplyChunk(1, 0, "Hello.", 0.0)
    pipeline.send(chunk)
    pipeline.send(stages.EndOfReply(1))
    assert pipeline.synthesizer.inbox.get_nowait() is chunk
    assert isinstance(pipeline.synthesizer.inbox.get_nowait(), stages.EndOfReply)
    assert pipeline.responder.inbox.empty() and pipeline.transcriber.inbox.empty()
