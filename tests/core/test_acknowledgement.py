"""The late-answer acknowledgement: when it fires, when it must not, how it plays."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.acknowledgement import (
    AcknowledgementRule,
    AcknowledgementSounds,
    Acknowledger,
    default_phrases,
    trim_silence,
)
from app.core.events import (
    Acknowledged,
    AnswerStarted,
    PipelineEvent,
    PlaybackEnded,
    PlaybackStarted,
    ReplyChunk,
    SpeechAudio,
    SpeechStarted,
    TurnConfirmed,
    TurnStarted,
)
from app.core.metrics import TimelineRecorder
from app.core.playback import PlaybackQueue
from app.core.telemetry import MouthCue
from app.personas.model import AcknowledgementSettings, Persona

RATE = 16_000


def tone(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE), dtype=np.float32) / RATE
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


class _Tts:
    sample_rate = RATE

    def __init__(self) -> None:
        self.texts: list[str] = []

    def synthesize(self, text: str) -> np.ndarray:
        self.texts.append(text)
        silence = np.zeros(int(0.3 * RATE), np.float32)
        return np.concatenate([silence, tone(0.05 * len(text)), silence])


# ---- the rule ----------------------------------------------------------------------


def test_fires_once_at_the_deadline() -> None:
    rule = AcknowledgementRule()
    assert rule.arm(1, deadline=2.2)
    assert rule.wait_s(1.5) == pytest.approx(0.7)
    assert rule.due(2.1) is None
    assert rule.due(2.2) == 1
    assert rule.due(2.5) is None  # once per turn
    assert rule.wait_s(2.5) is None
    assert rule.last_fired == 1 and rule.fired_count == 1


def test_not_when_the_answer_audio_comes_first() -> None:
    rule = AcknowledgementRule()
    rule.arm(1, deadline=2.2)
    rule.answer_queued(1, at=2.0)
    assert rule.due(5.0) is None
    assert rule.wait_s(5.0) is None


def test_answer_audio_of_another_turn_does_not_cancel() -> None:
    rule = AcknowledgementRule()
    rule.arm(2, deadline=2.2)
    rule.answer_queued(1, at=2.0)
    rule.cancel(1)
    assert rule.due(2.2) == 2


def test_never_on_two_consecutive_turns() -> None:
    rule = AcknowledgementRule()
    rule.arm(1, 1.0)
    assert rule.due(1.0) == 1
    assert not rule.arm(2, 3.0)  # the turn after an acknowledged one stays silent
    assert rule.due(9.0) is None
    assert rule.arm(3, 10.0)  # and the one after that may again
    assert rule.due(10.0) == 3


def test_rearming_the_same_turn_does_not_fire_again() -> None:
    rule = AcknowledgementRule()
    rule.arm(1, 1.0)
    assert rule.due(1.0) == 1
    rule.arm(1, 5.0)
    assert rule.due(6.0) is None


def test_a_withdrawn_acknowledgement_does_not_block_the_next_turn() -> None:
    rule = AcknowledgementRule()
    rule.arm(1, 1.0)
    assert rule.due(1.0) == 1
    rule.withdraw(1)  # the answer reached the speaker first after all
    assert rule.arm(2, 3.0)
    assert rule.fired_count == 0


def _learnt(take_s: float) -> AcknowledgementRule:
    """A rule that has seen the voice make a first chunk in ``take_s`` seconds."""
    rule = AcknowledgementRule()
    rule.voice_started(1, at=0.0)
    rule.answer_queued(1, at=take_s)
    return rule


def test_an_answer_the_voice_is_making_is_not_kept_waiting_behind_a_phrase() -> None:
    """Kokoro takes 0.65 s; the first chunk went to it at 0.9 s, so its audio is due at
    1.55 s: a 0.6 s "えっと、" at 1.2 s would hold it until 1.8 s. No phrase."""
    rule = _learnt(0.65)
    rule.arm(2, deadline=1.2)
    rule.voice_started(2, at=0.9)
    assert rule.due(1.2, phrase_s=0.6) is None
    assert rule.wait_s(1.2) == pytest.approx(0.5)  # looks again once it is late
    rule.answer_queued(2, at=1.5)
    assert rule.due(1.7, phrase_s=0.6) is None and rule.fired_count == 0


def test_an_answer_late_after_all_still_gets_its_phrase() -> None:
    rule = _learnt(0.65)
    rule.arm(2, deadline=1.2)
    rule.voice_started(2, at=0.9)
    assert rule.due(1.2, phrase_s=0.6) is None
    assert rule.due(1.65, phrase_s=0.6) is None
    assert rule.due(1.70, phrase_s=0.6) == 2  # 0.15 s past the expected audio


def test_a_phrase_when_the_answer_is_further_off_than_the_phrase_is_long() -> None:
    rule = _learnt(0.65)
    rule.arm(2, deadline=1.2)
    rule.voice_started(2, at=1.1)  # due at 1.75 s, after a 0.4 s phrase would end
    assert rule.due(1.2, phrase_s=0.4) == 2


def test_nothing_with_the_voice_or_nothing_learnt_fires_as_before() -> None:
    rule = _learnt(0.65)
    rule.arm(2, deadline=1.2)  # the model has not written a first chunk yet
    assert rule.due(1.2, phrase_s=0.6) == 2
    fresh = AcknowledgementRule()  # the first turn: how long the voice takes is unknown
    fresh.arm(1, deadline=1.2)
    fresh.voice_started(1, at=1.0)
    assert fresh.due(1.2, phrase_s=0.6) == 1


def test_the_user_speaking_cancels() -> None:
    rule = AcknowledgementRule()
    rule.arm(1, 1.0)
    rule.cancel()
    assert rule.due(2.0) is None


# ---- sounds -------------------------------------------------------------------------


def test_phrases_are_trimmed_and_taken_in_turn() -> None:
    sounds = AcknowledgementSounds()
    tts = _Tts()
    sounds.prepare(tts, ("Hmm,", "Let me see..."), after_s=1.5)
    assert tts.texts == ["Hmm,", "Let me see..."]
    assert sounds.ready() and sounds.after_s == 1.5
    first, second, third = sounds.next(), sounds.next(), sounds.next()
    assert first is not None and second is not None and third is not None
    assert [first.text, second.text, third.text] == ["Hmm,", "Let me see...", "Hmm,"]
    # 0.3 s of silence each side became none before and ~60 ms after
    assert first.samples.size / RATE == pytest.approx(0.05 * 4 + 0.06, abs=0.01)


def test_no_phrases_means_off() -> None:
    sounds = AcknowledgementSounds()
    sounds.prepare(_Tts(), (), after_s=1.2)
    assert not sounds.ready() and sounds.next() is None


def test_trim_silence_of_silence_is_empty() -> None:
    assert trim_silence(np.zeros(RATE, np.float32), RATE).size == 0


def test_default_phrases_follow_the_language() -> None:
    assert default_phrases("en-GB") == ("Hmm,", "Let me see...")
    assert default_phrases("ja") == ("えっと、", "うーん、")
    assert default_phrases("zh-CN") == ("嗯，", "让我想想…")
    assert default_phrases("fr") == default_phrases("en")


def test_persona_setting() -> None:
    persona = Persona.model_validate({
        "id": "a", "name": "A", "system_prompt": "x", "language": "ja",
        "acknowledgement": {"after_s": 0.9},
    })
    assert persona.acknowledgement.after_s == 0.9
    assert persona.acknowledgement.phrases_for(persona.language) == ("えっと、", "うーん、")
    own = AcknowledgementSettings(phrases=("Well,",))
    assert own.phrases_for("ja") == ("Well,",)
    assert AcknowledgementSettings().after_s == 1.2
    with pytest.raises(ValueError, match="acknowledgement"):
        AcknowledgementSettings(phrases=("  ",))
    with pytest.raises(ValueError):
        AcknowledgementSettings(after_s=0.0)


# ---- wired: playback, timeline -------------------------------------------------------


class _Harness:
    def __init__(self) -> None:
        self.events: list[PipelineEvent] = []
        self.recorder = TimelineRecorder()
        self.playback = PlaybackQueue(RATE, self.publish)
        self.ack = Acknowledger(self.playback, lambda turn_id: True, self.publish)
        self.ack.sounds.prepare(_Tts(), ("Hmm,",), after_s=1.2)

    def publish(self, event: PipelineEvent) -> None:
        self.events.append(event)
        self.ack.observe(event)
        self.recorder.observe(event)

    def start_turn(self, turn_id: int, speech_end: float) -> None:
        self.publish(TurnStarted(turn_id, speech_end + 0.2, 0.0, speech_end, False))
        self.playback.begin(turn_id, held=False)
        self.publish(TurnConfirmed(turn_id, speech_end + 0.2, 0.0, speech_end))

    def answer(self, turn_id: int, text: str, at: float) -> None:
        samples = tone(0.5)
        self.publish(ReplyChunk(turn_id, 0, text, at - 0.1))
        self.publish(SpeechAudio(turn_id, 0, text, samples, RATE, at))
        self.playback.enqueue(turn_id, samples, text)
        self.playback.finish(turn_id)

    def play(self, seconds: float, start: float) -> None:
        block = 320
        for i in range(int(seconds * RATE / block)):
            self.playback.pull(block, start + i * block / RATE)


def test_late_answer_plays_after_the_acknowledgement_and_both_are_timed() -> None:
    h = _Harness()
    h.start_turn(1, speech_end=1.0)
    h.ack.tick(2.1)
    assert not any(isinstance(e, Acknowledged) for e in h.events)
    h.ack.tick(2.2)  # 1.2 s after the end of speech
    [ack] = [e for e in h.events if isinstance(e, Acknowledged)]
    assert ack.text == "Hmm,"
    h.play(0.1, start=2.2)  # "Hmm," starts
    h.answer(1, "Paris is the capital.", at=2.3)
    h.play(1.5, start=2.3)
    [ended] = [e for e in h.events if isinstance(e, PlaybackEnded)]
    assert ended.heard_text == "Paris is the capital."  # never "Hmm," in the history
    timeline = h.recorder.turns[1]
    assert timeline.acknowledgement == "Hmm,"
    assert timeline.first_sample_played == pytest.approx(2.2)
    started = [e for e in h.events if isinstance(e, AnswerStarted)]
    assert len(started) == 1 and timeline.answer_played == started[0].at
    assert timeline.first_answer_word is not None
    assert timeline.first_answer_word > timeline.first_sample_played + 0.15  # after "Hmm,"
    assert timeline.voice_to_first_sound == pytest.approx(1.2)
    assert timeline.voice_to_voice == pytest.approx(timeline.first_answer_word - 1.0)
    # the mouth moves for "Hmm," too: its timeline, made when the phrase was, is cued
    # with its first sample
    [hmm, *_] = [e for e in h.events if isinstance(e, MouthCue)]
    assert hmm.track is not None and hmm.track.duration > 0.1
    assert hmm.at == pytest.approx(2.2)


def test_answer_ready_in_time_gets_no_acknowledgement() -> None:
    h = _Harness()
    h.start_turn(1, speech_end=1.0)
    h.answer(1, "Paris.", at=1.8)
    h.ack.tick(3.0)
    h.play(1.0, start=3.0)
    assert not any(isinstance(e, (Acknowledged, AnswerStarted)) for e in h.events)
    timeline = h.recorder.turns[1]
    assert timeline.acknowledgement == ""
    assert timeline.first_answer_word == timeline.first_sample_played
    assert timeline.voice_to_voice == timeline.voice_to_first_sound


def test_playback_refuses_an_acknowledgement_behind_queued_answer_audio() -> None:
    h = _Harness()
    h.start_turn(1, speech_end=1.0)
    h.playback.enqueue(1, tone(0.5), "Paris.")  # queued, its event not yet seen
    h.ack.tick(2.2)
    assert not any(isinstance(e, Acknowledged) for e in h.events)
    assert h.ack.rule.fired_count == 0  # withdrawn: the next turn may acknowledge


def test_barge_in_cuts_the_acknowledgement() -> None:
    h = _Harness()
    h.start_turn(1, speech_end=1.0)
    h.ack.tick(2.2)
    h.play(0.1, start=2.2)
    assert any(isinstance(e, PlaybackStarted) for e in h.events)
    h.publish(SpeechStarted(2.3, 2.25))
    h.playback.cancel(1)  # what the pipeline does for a barge-in
    [ended] = [e for e in h.events if isinstance(e, PlaybackEnded)]
    assert ended.interrupted and ended.heard_text == ""
    out = h.playback.pull(1600, 2.4)
    assert not out.any()  # nothing of it plays on


def test_not_on_two_consecutive_turns_end_to_end() -> None:
    h = _Harness()
    h.start_turn(1, speech_end=1.0)
    h.ack.tick(2.2)
    h.answer(1, "One.", at=2.5)
    h.play(2.0, start=2.2)
    h.start_turn(2, speech_end=6.0)
    h.ack.tick(9.0)  # late again, but the turn before was acknowledged
    h.answer(2, "Two.", at=9.0)
    h.play(1.5, start=9.0)
    assert [e.turn_id for e in h.events if isinstance(e, Acknowledged)] == [1]
    assert h.recorder.turns[2].acknowledgement == ""


def test_phrases_made_before_in_the_same_voice_are_not_made_again() -> None:
    sounds = AcknowledgementSounds()
    tts = _Tts()
    sounds.prepare(tts, ("Hmm,", "Let me see..."), after_s=1.2, language="en")
    sounds.prepare(tts, ("Well,",), after_s=1.2, language="en")  # another persona
    sounds.prepare(tts, ("Hmm,", "Let me see..."), after_s=1.2, language="en")  # and back
    assert tts.texts == ["Hmm,", "Let me see...", "Well,"]
    assert [sounds.next().text, sounds.next().text] == ["Hmm,", "Let me see..."]  # type: ignore[union-attr]
    tts.voice = "another"  # type: ignore[attr-defined]
    sounds.prepare(tts, ("Hmm,",), after_s=1.2, language="en")
    sounds.prepare(tts, ("Hmm,",), after_s=1.2, language="ja")  # spoken in Japanese
    assert tts.texts[3:] == ["Hmm,", "Hmm,"]
