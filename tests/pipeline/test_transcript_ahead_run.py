"""The whole pipeline in real time: a request is transcribed once, from its audio at the
first quiet frame after it (ahead of the 96 ms pause), and answered from those words."""

from __future__ import annotations

import numpy as np

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.cli.file_session import run_file
from app.core.pipeline import Engines, PipelineConfig
from app.personas import Persona
from tests.pipeline.conftest import silence, voiced

FRAME = 512


class SizeRecorder(FakeRecognizer):
    """The fake recognizer, noting how much audio each call was given."""

    def __init__(self) -> None:
        super().__init__(["What is your name?"])
        self.sizes: list[int] = []

    def transcribe(self, audio: np.ndarray) -> str:
        self.sizes.append(int(audio.size))
        return super().transcribe(audio)


def _run(persona: Persona, ahead: bool) -> tuple[SizeRecorder, str]:
    recognizer = SizeRecorder()
    engines = Engines(FakeVoiceActivity(), recognizer, FakeLanguageModel(), FakeSynthesizer())
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(1.5)])
    result = run_file(engines, persona, audio, PipelineConfig(transcribe_ahead=ahead))
    [turn] = result.turns
    assert turn.first_sample_played is not None, "no reply was played"
    return recognizer, turn.transcript


def test_the_request_is_transcribed_once_from_its_first_quiet_frame(persona: Persona) -> None:
    ahead, heard_ahead = _run(persona, ahead=True)
    at_pause, heard_at_pause = _run(persona, ahead=False)
    assert heard_ahead == heard_at_pause == "What is your name?"
    assert len(ahead.sizes) == len(at_pause.sizes) == 1  # no second pass at the pause
    # the same utterance, two 32 ms frames sooner: the pause's last two quiet frames
    assert at_pause.sizes[0] - ahead.sizes[0] == 2 * FRAME
