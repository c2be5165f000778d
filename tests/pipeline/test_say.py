"""``VoicePipeline.say``: a persona's greeting is spoken through the synthesizer and the
playback queue like a reply, stops when the user talks over it, and never enters the
conversation. ``use_persona`` carries a persona's LLM settings to the engines."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from app.core.events import PipelineEvent, PlaybackEnded, PlaybackStarted, SpeechAudio
from app.core.pipeline import Engines, VoicePipeline
from app.core.runtime.messages import UsePersona
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
    # the greeting's start wakes the listener out of its idle pause (else a voice at once
    # over it waited up to 192 ms in the ring, 2 s of this test's fast-pulled audio)
    assert pipeline.stages.playback.on_begin == pipeline.stages.listener.wake
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


def test_reply_options_reach_the_engines_on_the_llm_thread(fake_engines: Engines) -> None:
    """The GUI thread never writes into a live engine: the options travel as a job."""
    llm = fake_engines.llm
    threads: list[str] = []
    set_temperature = llm.set_temperature  # type: ignore[attr-defined]

    def record(temperature: float | None) -> None:
        threads.append(threading.current_thread().name)
        set_temperature(temperature)

    llm.set_temperature = record  # type: ignore[attr-defined]
    pipeline = VoicePipeline(fake_engines, "You are a test.")
    pipeline.start()
    try:
        pipeline.use_persona(UsePersona(("en",), temperature=0.3, max_sentences=2))
        _wait(lambda: pipeline.responder.max_sentences == 2, pipeline)
        _wait(lambda: llm.temperature == 0.3, pipeline)  # type: ignore[attr-defined]
        pipeline.use_persona(UsePersona(("en",)))
        _wait(lambda: llm.temperature is None, pipeline)  # type: ignore[attr-defined]
        assert pipeline.responder.max_sentences == pipeline.config.max_reply_sentences
        assert threads == ["llm", "llm"]
    finally:
        pipeline.stop()
