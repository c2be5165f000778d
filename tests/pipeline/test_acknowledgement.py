"""The late-answer acknowledgement through the whole pipeline in real time (fake engines,
a slow language model): "Hmm," is heard first, then the answer, both on the timeline,
and only the answer goes into the conversation."""

from __future__ import annotations

import time

import numpy as np

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.cli.file_session import run_file
from app.core.pipeline import Engines
from app.personas import Persona
from app.personas.model import AcknowledgementSettings
from tests.pipeline.conftest import silence, voiced

REPLY = "I am Hanasu, a voice companion."


def _engines(token_delay_s: float) -> tuple[Engines, FakeSynthesizer]:
    tts = FakeSynthesizer()
    engines = Engines(
        FakeVoiceActivity(),
        FakeRecognizer(["What is your name?"]),
        FakeLanguageModel(REPLY, token_delay_s=token_delay_s),
        tts,
    )
    return engines, tts


def _with_ack(persona: Persona, after_s: float) -> Persona:
    settings = AcknowledgementSettings(after_s=after_s, phrases=("Hmm,",))
    return persona.model_copy(update={"acknowledgement": settings})


def _loud(track: np.ndarray, rate: int, start_s: float, end_s: float) -> bool:
    part = track[int(start_s * rate) : int(end_s * rate)]
    return bool(part.size) and float(np.abs(part).max()) > 0.01


def test_slow_answer_is_acknowledged_then_heard(persona: Persona) -> None:
    engines, tts = _engines(token_delay_s=0.4)  # first sentence ~2.4 s after the turn
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(4.5)])
    result = run_file(engines, _with_ack(persona, 0.5), audio)
    assert tts.texts[0] == "Hmm,"  # pre-synthesized at persona load, before any turn
    [turn] = result.turns
    assert turn.acknowledgement == "Hmm,"
    assert turn.speech_end is not None and turn.first_sample_played is not None
    assert turn.answer_played is not None and turn.first_answer_word == turn.answer_played
    # the acknowledgement near the deadline, the answer after it has played
    assert turn.voice_to_first_sound is not None and turn.voice_to_voice is not None
    assert 0.45 < turn.voice_to_first_sound < 1.6  # 0.5 s, give or take a loaded machine
    assert turn.voice_to_voice > turn.voice_to_first_sound + 0.2  # "Hmm," is 0.24 s
    assert turn.tts_first_audio is not None  # (the speaker stamps blocks ~ms ahead)
    assert turn.answer_played >= turn.tts_first_audio - 0.05
    # on the speaker: sound at the acknowledgement's time, before any answer audio existed
    rate = result.sample_rate
    assert _loud(result.output, rate, turn.first_sample_played, turn.first_sample_played + 0.2)
    assert turn.first_sample_played < turn.tts_first_audio
    # never part of what was heard, so never in the conversation
    assert turn.heard_text == REPLY
    assert "Hmm" not in turn.heard_text and "Hmm" not in turn.reply_text
    assert tts.texts.count("Hmm,") == 1  # synthesized once, not at the moment of need


def test_prompt_answer_is_not_acknowledged(persona: Persona) -> None:
    engines, _ = _engines(token_delay_s=0.0)
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(2.0)])
    result = run_file(engines, _with_ack(persona, 1.2), audio)
    [turn] = result.turns
    assert turn.acknowledgement == ""
    assert turn.answer_played is None
    assert turn.first_answer_word == turn.first_sample_played
    assert turn.heard_text == REPLY


class _VoicedSynthesizer(FakeSynthesizer):
    """A fake whose voice and speed can change, as Kokoro's (``ChoosesVoice``)."""

    voice = "af_heart"
    speed = 1.0


def test_a_new_voice_remakes_the_phrases_and_an_old_one_reuses_them() -> None:
    from app.core.pipeline import VoicePipeline
    from app.core.runtime.messages import UsePersona

    tts = _VoicedSynthesizer()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(["What is your name?"]),
                      FakeLanguageModel(REPLY, token_delay_s=0.0), tts)
    pipeline = VoicePipeline(engines, "You are a test.")
    pipeline.start()
    try:
        pipeline.use_persona(UsePersona(("en",), voice="af_heart",
                                        acknowledgement_phrases=("Hmm,",)))
        pipeline.use_persona(UsePersona(
            ("en",), voice="af_sky", speed=1.1, acknowledgement_phrases=("Hmm,",)))
        pipeline.use_persona(UsePersona(("en",), voice="af_heart",
                                        acknowledgement_phrases=("Hmm,",)))  # and back
        deadline = time.monotonic() + 5
        while not pipeline.is_idle() and time.monotonic() < deadline:
            time.sleep(0.01)
        # once at load, again in the new voice; the first voice's is kept for the way back
        assert tts.texts == ["Hmm,", "Hmm,"]
        assert (tts.voice, tts.speed) == ("af_heart", 1.0)
        assert pipeline.acknowledger.sounds.ready()
    finally:
        pipeline.stop()
