"""Never lose the user's words at a short pause (real Silero VAD and Whisper, real time).

"Tell me a long story about a dragon | who learns to bake bread": an end-of-turn model that
is sure the user finished (as Smart Turn was, at 0.87) ends the turn in the short gap; the
user goes on before any reply is heard. The request the LLM gets must hold both halves, and
the fragment must leave no trace in the history. Spoken by two espeak-ng voices, with gaps
that end the turn early and a gap long enough for an ordinary end of turn.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from app.adapters.fakes import FakeLanguageModel, FakeSynthesizer, FakeTurnDetector
from app.cli.file_session import run_file
from app.core.events import FloatAudio
from app.core.pipeline import Engines
from app.core.turn_commands import REOPENED
from app.personas import Persona
from tests.support.system import require_tools

RATE = 16_000
FIRST = "Tell me a long story about a dragon"
SECOND = "who learns to bake bread"


def spoken(text: str, voice: str, folder: Path) -> FloatAudio:
    """``text`` in an espeak-ng voice, 16 kHz, with its own leading/trailing silence cut."""
    import soundfile as sf

    from app.adapters.resample import resample

    require_tools("espeak-ng")
    exe = shutil.which("espeak-ng")
    assert exe is not None
    path = folder / f"{voice}-{len(text)}.wav"
    subprocess.run([exe, "-v", voice, "-s", "150", "-w", str(path), text], check=True)
    data, rate = sf.read(str(path), dtype="float32", always_2d=False)
    speech = resample(data, int(rate), RATE)
    loud = np.flatnonzero(np.abs(speech) > 0.02)
    return speech[loud[0]:loud[-1] + 1]


@pytest.fixture(scope="module")
def ears() -> tuple[object, object]:
    """The real VAD and recognizer (loaded once: each test builds fresh fakes around them)."""
    from app.adapters.silero_vad import SileroVad
    from app.adapters.whisper_asr import WhisperRecognizer
    from app.models.resolve import resolve

    return SileroVad(resolve("vad").path), WhisperRecognizer(resolve("asr").path)


def words(text: str) -> set[str]:
    return set("".join(c if c.isalnum() else " " for c in text.lower()).split())


@pytest.mark.slow
@pytest.mark.parametrize("gap_s", [0.12, 0.2, 0.25, 0.7])
@pytest.mark.parametrize("voice", ["en-us", "en-gb"])
def test_words_after_a_short_pause_join_the_request(
    ears: tuple[object, object], persona: Persona, tmp_path: Path, gap_s: float, voice: str
) -> None:
    vad, asr = ears
    # 30 ms a token: a reply starts a few hundred ms after the end of turn, as with real
    # models on a CPU (an instant one could start inside the user's pause)
    llm = FakeLanguageModel(reply="Once upon a time there was a dragon.", token_delay_s=0.03)
    engines = Engines(vad, asr, llm, FakeSynthesizer())  # type: ignore[arg-type]
    audio = np.concatenate([
        np.zeros(int(0.5 * RATE), np.float32),
        spoken(FIRST, voice, tmp_path),
        np.zeros(int(gap_s * RATE), np.float32),
        spoken(SECOND, voice, tmp_path),
        np.zeros(int(1.5 * RATE), np.float32),
    ])
    result = run_file(engines, persona, audio, max_wait_s=30.0,
                      turn_detector=FakeTurnDetector(probability=0.95))

    # a reopened fragment may have played a blip (< 0.3 s) before the user went on
    answered = [t for t in result.turns if t.heard_text and t.cancelled != REOPENED]
    assert answered, f"no reply was heard: {result.turns}"
    requests = [m.content for m in llm.prompts[-1] if m.role == "user"]
    said = " ".join(requests)
    # Whisper tiny.en may mishear a word of robotic speech; the two halves must both be there.
    assert {"dragon", "story"} & words(said), f"the first half was lost: {requests}"
    second_half = {"bread", "bake", "learns", "who"}  # "who learns to make red": tiny.en
    assert second_half & words(said), f"the second half was lost: {requests}"
    if gap_s < 0.3:
        # The user went on long before any reply could play: one request, both halves.
        last = words(requests[-1])
        assert {"dragon", "story"} & last and second_half & last, requests
        reopened = [t for t in result.turns if t.cancelled == REOPENED]
        fragments = [t for t in result.turns if t.confirmed and t is not result.turns[-1]]
        assert all(t.cancelled for t in fragments), result.turns
        assert len(answered) == 1, [t.transcript for t in answered]
        assert all(not t.heard_text for t in reopened)
