"""Whose voice a turn is in: enrolled voices and the companion's name are heard, other
voices are not; with nobody enrolled every voice is heard. The turn machine drops a turn
in another voice like speech that was not the user's, and a paused reply plays on."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.events import AssistantState, Transcript, TurnCancelled
from app.core.turn_commands import OTHER_VOICE, Publish
from app.core.voice_gate import (
    GOING_ON_SIMILARITY,
    SAME_VOICE_SIMILARITY,
    VoiceGate,
    VoicePrint,
    addressed,
)
from tests.core.test_turn import _over, _speaking, ended, machine, names, paused, start_of


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


ALICE = VoicePrint("Alice", tuple(float(x) for x in unit(1, 0, 0)), 1.7e9, 21.5)


@pytest.mark.parametrize(("text", "name"), [
    ("Aiko, what time is it?", "Aiko"),
    ("hey aiko what's the weather", "Aiko"),
    ("Hannah, are you there?", "Hana"),  # the recognizer's spelling of the name
    ("Mori, set a timer", "Captain Mori"),
    ("Captain, set a timer", "Captain Mori"),
    ("Hey Captin, hello", "Captain Mori"),  # one letter off, in a long name
    ("結衣、今何時？", "結衣"),
    ("Zoé, bonjour", "Zoe"),
])
def test_the_companion_is_called_by_name(text: str, name: str) -> None:
    assert addressed(text, [name])


@pytest.mark.parametrize(("text", "name"), [
    ("Did you buy milk?", "Aiko"),
    ("Mike, what time is it?", "Aiko"),  # another name
    ("I'm so hungry today", "Hana"),
    ("She bought a chain saw", "Kai"),  # "Kai" is not inside other words
    ("", "Hana"),
])
def test_other_words_do_not_call_it(text: str, name: str) -> None:
    assert not addressed(text, [name])


def test_nobody_enrolled_ignores_nothing() -> None:
    gate = VoiceGate(names=("Aiko",))
    assert not gate.active
    assert not gate.ignores(unit(0, 1, 0), "Did you buy milk?")


def test_an_enrolled_voice_is_heard_another_only_by_name() -> None:
    gate = VoiceGate((ALICE,), ("Aiko",))
    same = unit(1, 0.2, 0)  # cosine 0.98
    other = unit(0.5, 1, 0)  # cosine 0.45
    assert gate.known(same) and not gate.known(other)
    assert not gate.ignores(same, "Did you buy milk?")
    assert gate.ignores(other, "Did you buy milk?")
    assert not gate.ignores(other, "Aiko, what time is it?")
    assert not gate.ignores(None, "Did you buy milk?")  # no print: never dropped
    assert not gate.ignores(other, "  ")  # no words: the "no words" path drops it


def test_the_threshold_is_where_the_similarity_is_cut() -> None:
    gate = VoiceGate((ALICE,))
    angle = np.arccos(SAME_VOICE_SIMILARITY)
    assert gate.known(unit(np.cos(angle - 0.01), np.sin(angle - 0.01), 0))
    assert not gate.known(unit(np.cos(angle + 0.01), np.sin(angle + 0.01), 0))


def test_right_after_the_users_words_a_blurred_print_is_still_theirs() -> None:
    """A fragment said right after the user's own words (or as loud as the user over a known
    quieter voice) is judged at the lower bar; a clearly different voice still is not."""
    gate = VoiceGate((ALICE,))
    blurred = unit(np.cos(np.arccos(0.70)), np.sin(np.arccos(0.70)), 0)  # 0.70 to Alice
    assert not gate.known(blurred) and gate.ignores(blurred, "with blueberries, please")
    assert gate.known(blurred, going_on=True)
    assert not gate.ignores(blurred, "with blueberries, please", going_on=True)
    flatmate = unit(np.cos(np.arccos(0.55)), np.sin(np.arccos(0.55)), 0)
    assert gate.ignores(flatmate, "Did you buy milk?", going_on=True)
    assert GOING_ON_SIMILARITY < SAME_VOICE_SIMILARITY


def test_a_print_is_the_normalised_mean_of_its_utterances() -> None:
    made = VoicePrint.from_embeddings("Bo", [unit(1, 0, 0), unit(0, 1, 0)], 1.0, 9.0)
    assert np.allclose(made.embedding, unit(1, 1, 0), atol=1e-6)
    with pytest.raises(ValueError):
        VoicePrint.from_embeddings("Bo", [np.zeros(3, dtype=np.float32)], 1.0, 9.0)


def test_another_voice_never_opens_a_turn() -> None:
    m = machine()
    m.voices_enrolled = True
    turn = start_of(m.handle(paused()))
    cmds = m.handle(Transcript(turn.turn_id, "", 1.2, other_voice=True))
    cancelled = [c.event for c in cmds if isinstance(c, Publish)
                 and isinstance(c.event, TurnCancelled)]
    assert [c.reason for c in cancelled] == [OTHER_VOICE]
    assert "Respond" not in names(cmds)
    cmds = m.handle(ended(1.3))  # its end of turn does not start it again
    assert "StartTurn" not in names(cmds) and m.live_turn_id is None
    assert m.state is AssistantState.IDLE


def test_another_voice_over_a_reply_lets_it_play_on() -> None:
    m = machine(speculative=False)
    m.voices_enrolled = True
    first = _speaking(m)
    m.handle(_over(2.5, 2.28))
    assert m.next_deadline() is None  # the voice decides, not the clock
    assert names(m.tick(10.0)) == []
    second = start_of(m.handle(ended(4.0)))
    cmds = m.handle(Transcript(second.turn_id, "", 4.2, other_voice=True))
    assert "BargeIn" not in names(cmds) and "Respond" not in names(cmds)
    assert "ResumePlayback" in names(cmds) and "PlaybackResumed" in names(cmds)
    assert m.live_turn_id == first.turn_id and m.state is AssistantState.SPEAKING


def test_an_enrolled_voice_over_a_reply_still_interrupts_it() -> None:
    m = machine(speculative=False)
    m.voices_enrolled = True
    _speaking(m)
    m.handle(_over(2.5, 2.28))
    second = start_of(m.handle(ended(4.0)))
    cmds = m.handle(Transcript(second.turn_id, "Stop, tell me a joke instead.", 4.2))
    assert names(cmds)[:3] == ["BargeIn", "TurnCancelled", "CancelTurn"]


def _transcribe(gate: VoiceGate, audio: np.ndarray, words: str) -> list[object]:
    from app.adapters.fakes import FakeRecognizer, FakeSpeakerEncoder
    from app.core.stage_jobs import SetVoiceGate
    from app.core.transcriber import Transcriber
    from app.core.turn_commands import StartTurn
    from app.core.worker import LiveTurn

    class Clock:
        def now(self) -> float:
            return 1.0

    published: list[object] = []
    live = LiveTurn()
    live.turn_id = 7
    stage = Transcriber(published.append, FakeRecognizer([words]), live, Clock(),
                        FakeSpeakerEncoder())
    stage.handle(SetVoiceGate(gate))
    stage.handle(StartTurn(7, audio, held=False))
    stage.voices.close()
    return published


def _tone(hz: float) -> np.ndarray:
    t = np.arange(16_000, dtype=np.float32) / 16_000
    return (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def test_the_transcriber_keeps_another_voices_words_to_itself() -> None:
    from app.adapters.fakes import FakeSpeakerEncoder

    enrolled = FakeSpeakerEncoder().embed(_tone(180))
    gate = VoiceGate((VoicePrint("A", tuple(map(float, enrolled)), 1.0, 10.0),), ("Aiko",))
    [other] = _transcribe(gate, _tone(300), "Did you buy milk?")
    assert other == Transcript(7, "", 1.0, other_voice=True)
    [named] = _transcribe(gate, _tone(300), "Aiko, what time is it?")
    assert isinstance(named, Transcript) and named.text == "Aiko, what time is it?"
    [known] = _transcribe(gate, _tone(180), "Did you buy milk?")
    assert isinstance(known, Transcript) and not known.other_voice
    [anyone] = _transcribe(VoiceGate(), _tone(300), "Did you buy milk?")
    assert isinstance(anyone, Transcript) and anyone.text == "Did you buy milk?"


def test_another_voice_before_the_reply_is_heard_leaves_the_request_asked_alone() -> None:
    """The user asked; another voice spoke before the reply was audible, which reopens the
    turn (its words joined in front of the next utterance). That utterance is another
    voice's: it is judged without the user's words, dropped, and the request asked again."""
    from app.core.events import SpeechStarted, TurnConfirmed, TurnStarted, UtteranceEnded
    from app.core.turn_commands import REOPENED, Respond, StartTurn

    m = machine(speculative=False)
    m.voices_enrolled = True
    first = start_of(m.handle(ended(1.3)))
    cmds = m.handle(SpeechStarted(at=2.0, speech_start=1.9))
    assert [c.event.reason for c in cmds if isinstance(c, Publish)
            and isinstance(c.event, TurnCancelled)] == [REOPENED]
    other = UtteranceEnded(at=3.0, speech_start=1.9, speech_end=2.8, audio=ended().audio)
    second = start_of(m.handle(other))
    assert second.audio.size > first.audio.size  # the user's words in front...
    assert second.audio[second.voice_from:].size == first.audio.size  # ...not judged
    cmds = m.handle(Transcript(second.turn_id, "", 3.2, other_voice=True))
    assert names(cmds) == ["TurnCancelled", "CancelTurn", "TurnStarted", "TurnConfirmed",
                           "StartTurn"]
    assert m.state is AssistantState.THINKING
    again = start_of(cmds)
    assert np.array_equal(again.audio, first.audio) and again.voice_from == 0
    # timed from the user's words (0.2-0.84 s), not from when it was asked again
    assert [(c.event.speech_start, c.event.speech_end) for c in cmds if isinstance(c, Publish)
            and isinstance(c.event, TurnStarted | TurnConfirmed)] == [(0.2, 0.84)] * 2
    cmds = m.handle(Transcript(again.turn_id, "What time is it?", 3.5))
    [respond] = [c for c in cmds if isinstance(c, Respond)]
    assert [msg.content for msg in respond.messages if msg.role == "user"] == [
        "What time is it?"]
    assert isinstance(again, StartTurn)


def test_a_speculative_other_voice_asks_the_request_again_at_its_end_of_turn() -> None:
    from app.core.events import SpeechStarted

    m = machine()
    m.voices_enrolled = True
    first = start_of(m.handle(paused()))
    m.handle(ended(1.3))  # confirmed
    m.handle(SpeechStarted(at=2.0, speech_start=1.9))  # reopened
    second = start_of(m.handle(paused(2.8)))
    cmds = m.handle(Transcript(second.turn_id, "", 3.0, other_voice=True))
    assert "StartTurn" not in names(cmds)  # not while the other voice's turn is open
    cmds = m.handle(ended(3.3))
    again = start_of(cmds)
    assert np.array_equal(again.audio, first.audio)
    assert m.live_turn_id == again.turn_id and m.state is AssistantState.THINKING


def test_the_recognizer_expects_the_names_only_with_voices_enrolled() -> None:
    from app.core.stage_jobs import SetVoiceGate
    from app.core.transcriber import Transcriber
    from app.core.worker import LiveTurn

    class Recognizer:
        names: tuple[str, ...] | None = None

        def transcribe(self, audio: np.ndarray) -> str:
            return ""

        def expect_names(self, names: tuple[str, ...]) -> None:
            self.names = tuple(names)

    asr = Recognizer()
    stage = Transcriber(lambda _e: None, asr, LiveTurn(), lambda: 0.0)  # type: ignore[arg-type]
    stage.handle(SetVoiceGate(VoiceGate(names=("Kai",))))
    assert asr.names == ()
    stage.handle(SetVoiceGate(VoiceGate((ALICE,), ("Kai",))))
    assert asr.names == ("Kai",)
