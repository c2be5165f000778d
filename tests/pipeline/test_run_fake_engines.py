"""The whole pipeline in real time with the fake engines: file in, speaker track out."""

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
from tests.pipeline.conftest import silence, voiced


def loud_times(track: np.ndarray, rate: int) -> np.ndarray:
    return np.flatnonzero(np.abs(track) > 0.01) / rate


def test_reply_is_played_after_the_question_and_not_before(
    fake_engines: Engines, persona: Persona
) -> None:
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(1.0)])
    result = run_file(fake_engines, persona, audio)
    times = loud_times(result.output, result.sample_rate)
    assert times.size, "no reply was played"
    assert times[0] > 1.5  # speech ends at 1.5 s
    assert times[0] < 1.5 + 1.5  # and the reply starts promptly
    assert result.output.size >= audio.size  # same rate (16 kHz) for the fake TTS
    [turn] = result.turns
    assert turn.transcript == "What is your name?"
    assert turn.heard_text.startswith("I am Hanasu")
    assert turn.first_sample_played is not None and turn.speech_end is not None
    assert abs(turn.speech_end - 1.5) < 0.05
    assert turn.voice_to_voice is not None and 0 < turn.voice_to_voice < 1.5
    stamps = [
        turn.speech_end,
        turn.turn_started,
        turn.asr_final,
        turn.llm_first_token,
        turn.first_chunk_to_tts,
        turn.tts_first_audio,
    ]
    assert all(s is not None for s in stamps)
    assert stamps == sorted(stamps)  # type: ignore[type-var]


def test_barge_in_stops_playback_and_a_second_reply_follows(
    fake_engines: Engines, persona: Persona
) -> None:
    # question 0.5-1.5 s; the ~5 s reply starts near 2.0 s; user talks over it at 3.0 s
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(1.5), voiced(1.0), silence(1.0)])
    result = run_file(fake_engines, persona, audio)
    first, second = result.turns
    assert first.barge_in is not None
    assert 3.0 < first.barge_in < 3.6
    assert first.interrupted
    heard = first.heard_text.split()
    assert 0 < len(heard) < len(first.reply_text.split())
    rate = result.sample_rate
    # playback stops within a block or two of the barge-in decision
    window = result.output[int((first.barge_in + 0.05) * rate) : int(4.0 * rate)]
    assert float(np.max(np.abs(window))) < 0.01
    assert second.transcript == "Stop, tell me a joke instead."
    assert second.first_sample_played is not None and second.first_sample_played > 4.0
    assert not second.interrupted


def test_speculative_turn_is_cancelled_when_the_user_goes_on(persona: Persona) -> None:
    # a 300 ms pause mid-utterance: longer than the speculative pause, shorter than end of
    # turn; the words so far trail off ("... is"), so the turn is not ended at the pause
    engines = Engines(
        FakeVoiceActivity(),
        FakeRecognizer(["So what I was thinking is that", "So what is your name?"]),
        FakeLanguageModel(),
        FakeSynthesizer(),
    )
    audio = np.concatenate([silence(0.5), voiced(0.8), silence(0.3), voiced(0.8), silence(1.2)])
    result = run_file(engines, persona, audio)
    assert result.speculative_cancelled >= 1
    [turn] = result.turns
    assert turn.speech_start is not None and turn.speech_start < 0.6
    times = loud_times(result.output, result.sample_rate)
    assert times[0] > 2.4  # nothing played during the pause


def test_a_finished_question_ends_the_turn_before_the_silence_rule_would(
    fake_engines: Engines, persona: Persona
) -> None:
    """The words at the first pause ("What is your name?") end the turn: the silence rule
    alone would wait 480 ms."""
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(1.5)])
    result = run_file(fake_engines, persona, audio)
    [turn] = result.turns
    assert turn.end_of_turn_text == "question"
    assert turn.end_of_turn is not None and turn.speech_end is not None
    assert turn.end_of_turn - turn.speech_end < 0.45


def test_a_noise_with_no_words_gets_no_reply_and_the_run_ends(persona: Persona) -> None:
    engines = Engines(
        FakeVoiceActivity(), FakeRecognizer([""]), FakeLanguageModel(), FakeSynthesizer()
    )
    audio = np.concatenate([silence(0.5), voiced(0.6), silence(1.0)])
    started = time.monotonic()
    result = run_file(engines, persona, audio, max_wait_s=30)
    assert time.monotonic() - started < 10  # the pipeline went idle, no waiting for the limit
    assert result.turns == []
    assert not np.any(np.abs(result.output) > 0.01)


def test_out_of_character_sentences_are_never_spoken(persona: Persona) -> None:
    tts = FakeSynthesizer()
    llm = FakeLanguageModel("As an AI language model, I have no favourite colour. Blue is lovely!")
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(["Favourite colour?"]), llm, tts)
    audio = np.concatenate([silence(0.5), voiced(0.8), silence(1.0)])
    result = run_file(engines, persona, audio)
    [turn] = result.turns
    assert tts.texts and "Blue is lovely!" in tts.texts
    assert not any("AI" in text for text in tts.texts)
    assert "AI" not in turn.heard_text  # history holds only what was heard


def test_a_rambling_reply_is_cut_after_four_sentences(persona: Persona) -> None:
    tts = FakeSynthesizer(seconds_per_char=0.01)
    ramble = " ".join(f"This is sentence number {n}." for n in range(1, 11))
    engines = Engines(
        FakeVoiceActivity(), FakeRecognizer(["Talk to me."]), FakeLanguageModel(ramble), tts
    )
    audio = np.concatenate([silence(0.5), voiced(0.8), silence(1.0)])
    result = run_file(engines, persona, audio)
    [turn] = result.turns
    acks = persona.acknowledgement.phrases_for(persona.language)  # made ready at load
    spoken = [text for text in tts.texts if text not in acks]
    assert spoken == [f"This is sentence number {n}." for n in range(1, 5)]
    assert turn.heard_text.endswith("number 4.")
