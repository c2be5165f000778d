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
