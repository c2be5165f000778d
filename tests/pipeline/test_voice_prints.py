"""Voice prints through the whole pipeline on real speech, in real time: with voice A
enrolled, A's request is answered, voice B's is ignored (no reply, and it does not stop a
reply), B calling the persona by name is answered; with nobody enrolled B is answered.

Real Silero VAD, real Whisper tiny.en, the real voice encoder; a scripted language model
and a tone voice, so the replies are known and their playback is measured exactly."""

from __future__ import annotations

import time

import numpy as np
import pytest

from app.adapters.fakes import FakeLanguageModel, FakeSynthesizer
from app.cli.file_session import RunResult, run_file
from app.core.pipeline import Engines
from app.core.turn_commands import OTHER_VOICE
from app.core.voice_gate import VoicePrint
from app.personas import Persona, load_personas
from tests.support.voices import ENROLMENT, silence, voice_a, voice_b

pytestmark = pytest.mark.slow

SHORT = "It is noon."
LONG = ("It is noon, and the sun is high over the roofs of the town, so it may be a good "
        "moment for lunch.")


@pytest.fixture(scope="module")
def models() -> tuple[object, object]:
    from app.adapters.voice_encoder import VoiceEncoder
    from app.adapters.whisper_asr import WhisperRecognizer
    from app.models.resolve import resolve

    return WhisperRecognizer(resolve("asr").path), VoiceEncoder()


@pytest.fixture(scope="module")
def kai() -> Persona:
    return load_personas().get("kai")


@pytest.fixture(scope="module")
def print_a(models: tuple[object, object]) -> VoicePrint:
    encoder = models[1]
    clips = [voice_a(text) for text in ENROLMENT]
    embeddings = [encoder.embed(clip) for clip in clips]  # type: ignore[attr-defined]
    return VoicePrint.from_embeddings("A", embeddings, time.time(),
                                      sum(c.size for c in clips) / 16_000)


def _run(models: tuple[object, object], persona: Persona, audio: np.ndarray,
         prints: list[VoicePrint], reply: str = SHORT, token_delay_s: float = 0.0) -> RunResult:
    from app.adapters.silero_vad import SileroVad

    asr, encoder = models
    llm = FakeLanguageModel(reply, token_delay_s=token_delay_s)
    engines = Engines(SileroVad(), asr, llm, FakeSynthesizer(),  # type: ignore[arg-type]
                      speaker=encoder)  # type: ignore[arg-type]
    return run_file(engines, persona, audio, voice_prints=prints, max_wait_s=20.0)


def _said(result: RunResult) -> list[str]:
    """What was answered (a turn in another voice may be confirmed before its voice is
    known; it is then dropped with no reply and its words are not kept)."""
    dropped = [t for t in result.turns if t.cancelled == OTHER_VOICE]
    assert all(t.transcript == "" and not t.reply_text for t in dropped)
    return [turn.transcript.lower() for turn in result.turns if turn.heard_text]


def test_only_the_enrolled_voice_or_the_persona_name_is_answered(
        models: tuple[object, object], kai: Persona, print_a: VoicePrint) -> None:
    audio = np.concatenate([
        silence(0.5), voice_a("What time is it right now?"), silence(2.5),
        voice_b("Did anyone buy milk on the way home?"), silence(2.5),
        voice_b("Kai, what time is it?"), silence(2.5)])
    result = _run(models, kai, audio, [print_a])
    said = _said(result)
    assert len(said) == 2, said
    assert "time" in said[0] and "milk" not in " ".join(said)
    assert said[1].startswith("kai")
    assert result.other_voice >= 1


def test_another_voice_does_not_stop_a_reply(
        models: tuple[object, object], kai: Persona, print_a: VoicePrint) -> None:
    audio = np.concatenate([
        silence(0.5), voice_a("What time is it right now?"), silence(1.5),
        voice_b("Did anyone buy milk on the way home?"), silence(6.0)])
    result = _run(models, kai, audio, [print_a], reply=LONG)
    answered = [t for t in result.turns if t.cancelled != OTHER_VOICE]
    assert len(answered) == 1, [(t.transcript, t.cancelled) for t in result.turns]
    [turn] = answered
    assert turn.heard_text == LONG and not turn.interrupted
    assert result.other_voice >= 1
    assert result.barge_in_stops, "B's voice paused the reply at its onset"
    assert result.resumed_after_pause >= 1  # and it played on once B was known


def test_another_voice_before_the_reply_leaves_the_request_alone(
        models: tuple[object, object], kai: Persona, print_a: VoicePrint) -> None:
    """B speaks while A's answer is still being thought of: the turn reopens as if A had
    gone on, B's words are found to be another voice's, and A's request is asked alone."""
    audio = np.concatenate([
        silence(0.5), voice_a("What time is it right now?"), silence(0.9),
        voice_b("Did anyone buy milk on the way home?"), silence(5.0)])
    result = _run(models, kai, audio, [print_a], token_delay_s=0.6)  # first words ~2 s late
    assert [turn.cancelled for turn in result.turns].count("reopened: the user went on") == 1
    # Whisper may leave off the question mark of a request cut from a reopened turn
    assert [said.rstrip("?.!") for said in _said(result)] == ["what time is it right now"]
    assert result.other_voice >= 1


def test_with_nobody_enrolled_every_voice_is_answered(
        models: tuple[object, object], kai: Persona) -> None:
    audio = np.concatenate([silence(0.5), voice_b("Did anyone buy milk on the way home?"),
                            silence(2.5)])
    result = _run(models, kai, audio, [])
    assert ["milk" in said for said in _said(result)] == [True]
    assert result.other_voice == 0


LEARNING_REQUESTS = (
    "Could you tell me a joke about cats?",
    "Remind me to water the plants tomorrow morning.",
    "How far away is the nearest library?",
    "Tell me something interesting about the moon.",
    "I think the train leaves at half past seven.",
    "Please turn the music down a little for me.",
)


def test_the_users_voice_is_learnt_from_their_requests_and_then_used(
        models: tuple[object, object], kai: Persona) -> None:
    """With "Learn my voice" on and nobody enrolled: A asks six things (B asks one in
    between, and is answered: nobody is known yet); A's voice is learnt from A's requests
    alone, and from then on B is ignored unless B says "Kai", while A is still answered."""
    a_requests = [voice_a(text) for text in LEARNING_REQUESTS]
    gap = silence(2.5)
    audio = np.concatenate([
        silence(0.5), a_requests[0], gap, a_requests[1], gap,
        voice_b("Did anyone feed the cat this morning?"), gap,
        *(part for clip in a_requests[2:] for part in (clip, gap)),
        voice_b("Did anyone buy milk on the way home?"), gap,
        voice_a("What time is it right now?"), gap])
    asr, encoder = models
    from app.adapters.silero_vad import SileroVad

    engines = Engines(SileroVad(), asr, FakeLanguageModel(SHORT), FakeSynthesizer(),  # type: ignore[arg-type]
                      speaker=encoder)  # type: ignore[arg-type]
    result = run_file(engines, kai, audio, learn_voice=True, max_wait_s=20.0)
    said = _said(result)
    assert [voice.name for voice in result.learnt] == ["You (learnt)"], said
    [learnt] = result.learnt
    a_speech = sum(clip.size for clip in a_requests) / 16_000
    # each turn's audio holds its request and ~0.25 s around it; with B's 2 s it would be
    # more. Somewhat less is allowed: the VAD's cut of a request can be shorter than the
    # clip, and a request that paused and went on is sampled only from where it went on
    # (a CI run under load was below a_speech); most of A's speech must be in it.
    assert 0.7 * a_speech <= learnt.speech_s < a_speech + 6 * 0.4, (learnt.speech_s, a_speech)
    assert any("cat" in text for text in said)  # before: every voice answered
    assert not any("milk" in text for text in said) and result.other_voice == 1
    assert "time" in said[-1]
    assert len(said) == 8, said



NEWS = ("In the news this evening the city council has approved a new plan for the harbour.",
        "Work on the bridge will begin in the spring and take about two years.",
        "Meanwhile heavy rain is expected along the coast for the rest of the week.",
        "Officials say the trains will run as normal despite the weather warnings.",
        "Sports fans will be pleased to hear that the final is on Saturday afternoon.")


def _television(lines: tuple[str, ...], rms: float) -> np.ndarray:
    """Voice B reading ``lines`` one straight after the other (no pause the VAD would end a
    turn at), at ``rms``."""
    said = []
    for line in lines:
        audio = voice_b(line)
        loud = np.flatnonzero(np.abs(audio) > 0.01)
        said.append(audio[loud[0]:loud[-1] + 1])
    joined = np.concatenate(said)
    return (joined * (rms / float(np.sqrt(np.mean(np.square(joined)))))).astype(np.float32)


def test_a_request_over_the_television_is_answered_when_the_user_stops(
        models: tuple[object, object], kai: Persona, print_a: VoicePrint) -> None:
    """A (enrolled) asks something; a television (voice B, 14 dB under A's request) reads
    the news and is ignored as another voice; it reads on, and A asks something over it.
    Before, that request merged with the news and ended only when the television paused
    (~9 s in ``bench room``); now the television's level is known, and A's request ends,
    and is answered, when A stops (``background_voice``).

    Why 14 dB: inside the rule's range by its own measure, which 12 dB is not for this
    request (docs/audio.md, "A television under the user's voice")."""
    first = voice_a("What time is it right now?")
    request = voice_a("Could you give me a good recipe for pancakes with blueberries, please?")
    tv_rms = float(np.sqrt(np.mean(np.square(request)))) / 10 ** (14 / 20)
    news, more_news = _television(NEWS[:2], tv_rms), _television(NEWS[2:], tv_rms)
    over = more_news.copy()
    asked_from = int(1.5 * 16_000)
    over[asked_from:asked_from + request.size] += request[:over.size - asked_from]
    parts = [silence(0.5), first, silence(2.5), news, silence(1.5), over, silence(3.0)]
    audio = np.concatenate(parts)
    over_at = sum(p.size for p in parts[:5]) / 16_000
    asked_until = over_at + (asked_from + request.size) / 16_000
    assert over_at + more_news.size / 16_000 > asked_until + 2.5  # the news goes on

    result = _run(models, kai, audio, [print_a])
    story = [(t.transcript, t.cancelled, t.speech_start, t.speech_end, t.first_sample_played)
             for t in sorted([*result.turns, *result.dropped], key=lambda t: t.turn_id)]
    answered = [t for t in result.turns if t.heard_text]
    assert answered and "time" in answered[0].transcript.lower(), story
    # the news got no answer: every answer is to A's words (a soft end of the request, once
    # the television no longer fills the pause before it, may be a turn of its own)
    asked_at = over_at + asked_from / 16_000
    assert all(t.speech_start is not None and asked_at - 0.4 <= t.speech_start <= asked_until
               for t in answered[1:]), story
    assert any("recipe" in t.transcript.lower() for t in answered), story
    # its last answer (the one to all of it) begins within 1.5 s of the user's last word
    last = answered[-1].first_sample_played
    assert last is not None and last - asked_until < 1.5, story
