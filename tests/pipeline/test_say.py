"""``VoicePipeline.say``: a persona's greeting is spoken through the synthesizer and the
playback queue like a reply, stops when the user talks over it, and never enters the
conversation. ``set_reply_options`` carries a persona's LLM settings to the engines."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from app.core.events import PipelineEvent, PlaybackEnded, PlaybackStarted, SpeechAudio
from app.core.pipeline import Engines, VoicePipeline
from tests.pipeline.conftest import voiced

BLOCK = 512
GREETING = "Hello there, I am your greeting. This is the second sentence."


def _wait(condition: Callable[[], bool], pipeline: VoicePipeline, timeout: float = 5.0,
          mic: np.ndarray | None = None) -> np.ndarray:
    """Play the speaker (and feed ``mic``) block by block until ``condition()``."""
    played: list[np.ndarray] = []
    deadline = time.monotonic() + timeout
    position = 0
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        played.append(pipeline.pull_audio(BLOCK))
        if mic is not None and position < mic.size:
            pipeline.push_audio(mic[position:position + BLOCK])
            position += BLOCK
        time.sleep(0.002)
    return np.concatenate(played) if played else np.zeros(0, np.float32)


def _pipeline(engines: Engines) -> tuple[VoicePipeline, list[PipelineEvent]]:
    pipeline = VoicePipeline(engines, "You are a test.")
    events: list[PipelineEvent] = []
    pipeline.add_observer(events.append)
    pipeline.start()
    return pipeline, events


def test_greeting_is_synthesized_and_played(fake_engines: Engines) -> None:
    pipeline, events = _pipeline(fake_engines)
    try:
        pipeline.say(GREETING)
        out = _wait(lambda: any(isinstance(e, PlaybackEnded) for e in events), pipeline)
        spoken = [e.text for e in events if isinstance(e, SpeechAudio)]
        # chunked as a reply is: a two-word first clause goes first
        assert spoken == ["Hello there,", "I am your greeting.", "This is the second sentence."]
        assert any(isinstance(e, PlaybackStarted) for e in events)
        [ended] = [e for e in events if isinstance(e, PlaybackEnded)]
        assert not ended.interrupted and ended.turn_id < 0  # never a turn machine id
        assert ended.heard_text == GREETING
        assert np.abs(out).max() > 0.01  # audio really went to the speaker
        assert pipeline.machine.conversation.exchanges == []  # not part of the history
        _wait(pipeline.is_idle, pipeline)
    finally:
        pipeline.stop()


def test_talking_over_the_greeting_stops_it(fake_engines: Engines) -> None:
    pipeline, events = _pipeline(fake_engines)
    try:
        pipeline.say(GREETING * 3)
        _wait(lambda: any(isinstance(e, PlaybackStarted) for e in events), pipeline)
        _wait(lambda: any(isinstance(e, PlaybackEnded) for e in events), pipeline,
              mic=voiced(2.0))
        ended = next(e for e in events if isinstance(e, PlaybackEnded))
        assert ended.interrupted
        assert ended.played_s < 2.5  # the whole greeting is over 10 s long
    finally:
        pipeline.stop()


def test_empty_text_stops_what_is_being_said(fake_engines: Engines) -> None:
    pipeline, events = _pipeline(fake_engines)
    try:
        pipeline.say(GREETING * 3)
        _wait(lambda: any(isinstance(e, PlaybackStarted) for e in events), pipeline)
        pipeline.say("")
        _wait(lambda: any(isinstance(e, PlaybackEnded) for e in events), pipeline)
        assert next(e for e in events if isinstance(e, PlaybackEnded)).interrupted
    finally:
        pipeline.stop()


def test_reply_options_reach_the_engines(fake_engines: Engines) -> None:
    pipeline = VoicePipeline(fake_engines, "You are a test.")
    pipeline.set_reply_options(0.3, 2)
    assert fake_engines.llm.temperature == 0.3  # type: ignore[attr-defined]
    assert pipeline.responder.max_sentences == 2
    pipeline.set_reply_options(None, None)
    assert fake_engines.llm.temperature is None  # type: ignore[attr-defined]
    assert pipeline.responder.max_sentences == pipeline.config.max_reply_sentences


def test_run_uses_the_persona_reply_settings(fake_engines: Engines) -> None:
    from app.cli.run import run_file
    from app.personas import load_personas
    from tests.pipeline.conftest import silence

    tess = load_personas().get("tess")
    brief = tess.model_copy(update={"llm": tess.llm.model_copy(update={"reply_sentences": 1})})
    result = run_file(fake_engines, brief, np.concatenate([silence(0.3), voiced(0.8),
                                                           silence(1.0)]))
    assert fake_engines.llm.temperature == 0.3  # type: ignore[attr-defined]
    [turn] = result.turns
    assert turn.heard_text == "I am Hanasu, a voice companion."  # one sentence, not three
