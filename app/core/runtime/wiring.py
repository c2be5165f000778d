"""Builds the stages of one pipeline and connects them to the router and the controller.

Every stage posts what it produces to ``publish`` (the controller's inbox) and hands jobs
to the others through ``router.send``; nothing here runs or decides anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from app.core.background_voice import BackgroundVoice
from app.core.barge_in import BargeInConfig, BargeInPolicy
from app.core.endpointing import Endpointer
from app.core.listener import Listener
from app.core.playback import PlaybackQueue
from app.core.ports import EchoCanceller, TurnDetector
from app.core.runtime.config import Engines, MonotonicClock, PipelineConfig
from app.core.runtime.router import JobRouter
from app.core.stage_jobs import TranscribeAhead
from app.core.stages import Responder
from app.core.synthesizer import Synthesizer
from app.core.transcriber import Transcriber
from app.core.worker import LiveTurn, Publish


class StageThread(Protocol):
    """What the pipeline does with every stage, whatever its inbox's type."""

    on_settled: Callable[[], None]

    def start(self) -> None: ...

    def stop(self, timeout: float = 5.0) -> None: ...

    def busy(self) -> bool: ...


@dataclass(frozen=True)
class Stages:
    """The worker threads of one pipeline and the state they share."""

    live: LiveTurn
    barge_in: BargeInPolicy
    playback: PlaybackQueue
    listener: Listener
    transcriber: Transcriber
    responder: Responder
    synthesizer: Synthesizer

    @property
    def workers(self) -> tuple[StageThread, ...]:
        """In start order: the listener first, so the microphone is drained at once."""
        return (self.listener, self.transcriber, self.responder, self.synthesizer)

    def busy(self) -> bool:
        return any(worker.busy() for worker in self.workers)


def build_stages(
    engines: Engines,
    config: PipelineConfig,
    clock: MonotonicClock,
    publish: Publish,
    router: JobRouter,
    echo: EchoCanceller | None = None,
    turn_detector: TurnDetector | None = None,
    barge_in: BargeInPolicy | None = None,
) -> Stages:
    """Every stage reports to ``publish``; the router is connected to them here."""
    barge_in = barge_in or BargeInPolicy(BargeInConfig(enabled=config.barge_in))
    live = LiveTurn()
    live.first_audio_priority = config.first_audio_priority
    playback = PlaybackQueue(engines.tts.sample_rate, publish)
    background = BackgroundVoice()  # the recognizer tells whose voice, the listener hears it
    listener = Listener(
        publish,
        engines.vad,
        Endpointer(config.endpoint, over_reply=barge_in.speech_bar),
        playback,
        echo,
        turn_detector,
        defer_to_transcript=config.speculative and config.words_end_turns,
        barge_in=barge_in,
        mic_ring_blocks=config.mic_ring_blocks,
        transcribe_ahead=(lambda audio: router.send(TranscribeAhead(audio)))
        if config.speculative and config.transcribe_ahead else None,
        background=background,
    )
    playback.on_begin = listener.wake  # a voice over a reply's start is not left waiting
    stages = Stages(
        live=live,
        barge_in=barge_in,
        playback=playback,
        listener=listener,
        transcriber=Transcriber(publish, engines.asr, live, clock, engines.speaker,
                                quiet_tail_s=config.endpoint.pause_ms / 1000,
                                background=background),
        responder=Responder(publish, engines.llm, live, clock, router.send,
                            config.max_reply_sentences, config.gate),
        synthesizer=Synthesizer(publish, engines.tts, live, clock, playback),
    )
    router.connect(stages)
    return stages

