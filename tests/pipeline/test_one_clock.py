"""Every event of a turn is stamped on one clock, however the devices count their samples.

The desktop app's microphone and speaker count samples from when their streams opened,
the stages read the pipeline's monotonic clock: the listener and the playback queue map
their samples onto that clock where audio comes in and goes out, so the latency HUD,
``run --timeline`` and ``bench`` subtract times of one clock.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from app.core.pipeline import Engines, MonotonicClock, VoicePipeline
from app.personas import Persona
from tests.pipeline.conftest import RATE, silence, voiced


class LateClock(MonotonicClock):
    """A pipeline clock whose zero is 100 s before the devices opened (an app that has been
    running a while): device sample counts and clock times differ by about 100 s."""

    def now(self) -> float:
        return super().now() + 100.0


def test_a_turn_in_the_app_is_timed_on_one_clock(fake_engines: Engines,
                                                  persona: Persona) -> None:
    clock = LateClock()
    pipeline = VoicePipeline(fake_engines, persona.full_system_prompt(), clock=clock)
    pipeline.start()
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(2.5)])
    stop = threading.Event()

    def speaker() -> None:  # a device callback: pulls 10 ms blocks, no time given
        while not stop.wait(0.01):
            pipeline.pull_audio(int(0.01 * fake_engines.tts.sample_rate))

    thread = threading.Thread(target=speaker, daemon=True)
    thread.start()
    started = time.monotonic()
    for index, begin in enumerate(range(0, audio.size, 512)):
        time.sleep(max(0.0, started + (index + 1) * 512 / RATE - time.monotonic()))
        pipeline.push_audio(audio[begin:begin + 512])  # as the device adapter does
    deadline = time.monotonic() + 10
    while not pipeline.is_idle() and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    thread.join(1)
    pipeline.stop()

    [turn] = pipeline.recorder.confirmed_turns()
    stamps = [turn.speech_start, turn.speech_end, turn.end_of_turn, turn.asr_final,
              turn.llm_first_token, turn.tts_first_audio, turn.first_sample_played]
    assert all(s is not None and 100.0 < s < 110.0 for s in stamps), stamps
    assert stamps == sorted(stamps), stamps  # type: ignore[type-var]
    assert turn.speech_end is not None and abs(turn.speech_end - (100.0 + 1.5)) < 0.3
    assert turn.voice_to_voice is not None and 0.0 < turn.voice_to_voice < 2.0
