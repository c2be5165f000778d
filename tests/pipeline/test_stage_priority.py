"""The model stages run at a lower CPU priority than the threads that feed the speaker:
on two cores a Kokoro sentence kept both cores busy and the speaker underflowed (dropouts
in the live Japanese test under load). Threads the model libraries start inherit it."""

from __future__ import annotations

import os
import threading

import pytest

from app.adapters.fakes import FakeSynthesizer
from app.core.events import FloatAudio
from app.core.pipeline import VoicePipeline
from app.core.worker import HEAVY_WORK_NICENESS
from tests.pipeline.conftest import silence, voiced

pytestmark = pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no nice levels here")


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


class NiceRecordingSynthesizer(FakeSynthesizer):
    def __init__(self) -> None:
        super().__init__()
        self.nice: list[int] = []
        self.child_nice: list[int] = []

    def synthesize(self, text: str) -> FloatAudio:
        self.nice.append(_nice())
        child = threading.Thread(target=lambda: self.child_nice.append(_nice()))
        child.start()  # as onnxruntime's or llama.cpp's own worker threads are
        child.join()
        return super().synthesize(text)


def test_model_stages_run_below_the_audio_threads(fake_engines) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    import numpy as np

    tts = NiceRecordingSynthesizer()
    pipeline = VoicePipeline(replace(fake_engines, tts=tts), "You are a test.")
    pipeline.start()
    try:
        mic = np.concatenate([silence(0.3), voiced(1.0), silence(1.2)])
        for start in range(0, mic.size, 512):
            pipeline.push_audio(mic[start:start + 512])
            pipeline.pull_audio(512)
        import time

        deadline = time.monotonic() + 10
        while not tts.child_nice and time.monotonic() < deadline:
            pipeline.pull_audio(512)
            time.sleep(0.005)
        assert tts.nice, "nothing was synthesized"
        main = _nice()
        assert tts.nice[0] == min(main + HEAVY_WORK_NICENESS, 19)
        assert tts.child_nice[0] == tts.nice[0]  # inherited by the library's threads
        assert _nice() == main  # the caller's thread (the audio side) is untouched
    finally:
        pipeline.stop()
