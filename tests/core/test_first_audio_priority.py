"""The LLM stops decoding while the reply's first chunk is synthesized (on 2 cores the two
otherwise share the CPU exactly when the user is waiting), and decodes on after it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from app.adapters.fakes import FakeLanguageModel
from app.core.events import PipelineEvent, ReplyFinished
from app.core.playback import PlaybackQueue
from app.core.ports import ChatMessage, PromptStats
from app.core.stages import Responder
from app.core.synthesizer import Synthesizer
from app.core.turn_commands import Respond
from app.core.worker import LiveTurn

RATE = 16_000


class _TimedModel(FakeLanguageModel):
    """Records when each token was decoded."""

    def __init__(self) -> None:
        super().__init__("Hi there. This is the rest of a longer reply, word by word.",
                         token_delay_s=0.01)
        self.decoded: list[float] = []

    def stream(
        self,
        messages: Sequence[ChatMessage],
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        for piece in super().stream(messages, cancelled, on_prompt):
            self.decoded.append(time.monotonic())
            yield piece


class _SlowVoice:
    sample_rate = RATE

    def __init__(self) -> None:
        self.windows: list[tuple[float, float]] = []

    def synthesize(self, text: str) -> np.ndarray:
        started = time.monotonic()
        time.sleep(0.3)
        self.windows.append((started, time.monotonic()))
        return np.full(RATE // 10, 0.1, np.float32)


class _Clock:
    def now(self) -> float:
        return time.monotonic()


def _run(priority: bool) -> tuple[_TimedModel, _SlowVoice]:
    events: list[PipelineEvent] = []
    done = threading.Event()

    def publish(event: PipelineEvent) -> None:
        events.append(event)
        if isinstance(event, ReplyFinished):
            done.set()

    live = LiveTurn()
    live.first_audio_priority = priority
    live.turn_id = 1
    model, voice = _TimedModel(), _SlowVoice()
    playback = PlaybackQueue(RATE, publish)
    playback.begin(1, held=False)
    synthesizer = Synthesizer(publish, voice, live, _Clock(), playback)
    responder = Responder(publish, model, live, _Clock(), synthesizer.inbox.put)
    synthesizer.start()
    responder.start()
    try:
        responder.inbox.put(Respond(1, [ChatMessage("user", "hello")]))
        assert done.wait(10)
        deadline = time.monotonic() + 5
        while synthesizer.busy() and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        responder.stop()
        synthesizer.stop()
    return model, voice


def _decoded_during_first_chunk(model: _TimedModel, voice: _SlowVoice) -> int:
    start, end = voice.windows[0]
    return sum(1 for t in model.decoded if start + 0.02 < t < end - 0.02)


def test_llm_waits_while_the_first_chunk_is_synthesized() -> None:
    model, voice = _run(priority=True)
    assert _decoded_during_first_chunk(model, voice) == 0
    # and the rest of the reply still came: after the short "Hi there." in short chunks
    # ("This is the rest", "of a longer reply,", "word by word.")
    assert len(voice.windows) == 4
    assert model.decoded[-1] > voice.windows[0][1]


def test_without_priority_the_llm_decodes_alongside() -> None:
    model, voice = _run(priority=False)
    assert _decoded_during_first_chunk(model, voice) > 3
