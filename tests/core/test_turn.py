"""The turn machine: event order, speculative turns, barge-in, heard-text accounting."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.barge_in import BargeInConfig, BargeInPolicy
from app.core.conversation import Conversation
from app.core.events import (
    AssistantState,
    BargeIn,
    EndOfTurnDecided,
    EndOfTurnScore,
    PlaybackEnded,
    PlaybackStarted,
    SpeechAudio,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
    StageFailed,
    StateChanged,
    Transcript,
    TurnCancelled,
    UtteranceEnded,
)
from app.core.turn import TurnMachine
from app.core.turn_commands import (
    REOPENED,
    CancelTurn,
    Command,
    JudgeEndOfTurn,
    Publish,
    ReleaseTurn,
    Respond,
    StartTurn,
)
from app.core.turn_history import TurnHistory
from app.core.utterance_text import EndOfTurnCall

AUDIO = np.ones(1600, dtype=np.float32)


def machine(barge_in: bool = True, **kwargs: bool) -> TurnMachine:
    return TurnMachine(TurnHistory(Conversation("You are Hana.")),
                       barge_in=BargeInPolicy(BargeInConfig(enabled=barge_in)), **kwargs)


def names(commands: list[Command]) -> list[str]:
    out = []
    for c in commands:
        out.append(type(c.event).__name__ if isinstance(c, Publish) else type(c).__name__)
    return out


def states(commands: list[Command]) -> list[AssistantState]:
    return [
        c.event.state
        for c in commands
        if isinstance(c, Publish) and isinstance(c.event, StateChanged)
    ]


def start_of(commands: list[Command]) -> StartTurn:
    return next(c for c in commands if isinstance(c, StartTurn))


def paused(at: float = 1.0) -> SpeechPaused:
    return SpeechPaused(at=at, speech_start=0.2, speech_end=at - 0.16, audio=AUDIO)


def ended(at: float = 1.3) -> UtteranceEnded:
    return UtteranceEnded(at=at, speech_start=0.2, speech_end=0.84, audio=AUDIO)


def test_speculative_turn_is_held_then_released_at_end_of_turn() -> None:
    m = machine()
    assert states(m.handle(SpeechStarted(at=0.4, speech_start=0.2))) == [AssistantState.LISTENING]
    cmds = m.handle(paused())
    assert names(cmds) == ["TurnStarted", "StartTurn"]
    start = cmds[1]
    assert isinstance(start, StartTurn) and start.held
    respond = m.handle(Transcript(start.turn_id, "What is your name?", 1.2))
    assert isinstance(respond[0], Respond)
    assert respond[0].messages[-1].content == "What is your name?"
    assert respond[0].messages[0].role == "system"
    cmds = m.handle(ended())
    assert names(cmds) == ["TurnConfirmed", "ReleaseTurn", "StateChanged"]
    assert states(cmds) == [AssistantState.THINKING]


def test_user_resuming_cancels_the_speculative_turn_without_history() -> None:
    m = machine()
    m.handle(SpeechStarted(at=0.4, speech_start=0.2))
    start = m.handle(paused())[1]
    assert isinstance(start, StartTurn)
    cmds = m.handle(SpeechResumed(at=1.1))
    assert names(cmds) == ["TurnCancelled", "CancelTurn"]
    # the cancelled turn's late transcript and playback report are ignored
    assert m.handle(Transcript(start.turn_id, "What is", 1.2)) == []
    assert m.handle(PlaybackEnded(start.turn_id, "", True, 1.2)) == []
    assert m.conversation.exchanges == []
    # the full utterance then starts a fresh turn
    cmds = m.handle(ended(2.0))
    new_start = start_of(cmds)
    assert new_start.turn_id != start.turn_id and not new_start.held


def test_stale_transcript_is_dropped() -> None:
    m = machine(speculative=False)
    first = start_of(m.handle(ended()))
    assert m.handle(Transcript(first.turn_id + 7, "stale", 1.5)) == []


def test_full_turn_commits_what_was_heard_and_returns_to_idle() -> None:
    m = machine(speculative=False)
    start = start_of(m.handle(ended()))
    m.handle(Transcript(start.turn_id, "Hi there", 1.5))
    assert states(m.handle(PlaybackStarted(start.turn_id, 1.8))) == [AssistantState.SPEAKING]
    cmds = m.handle(PlaybackEnded(start.turn_id, "Hello! Nice to meet you.", False, 3.0))
    assert names(cmds) == ["TurnCommitted", "StateChanged"]
    assert states(cmds) == [AssistantState.IDLE]
    assert m.conversation.exchanges == [("Hi there", "Hello! Nice to meet you.")]


def ramp(start: int, stop: int) -> np.ndarray:
    """Audio whose every sample is its own index on the microphone stream (16 kHz)."""
    return np.arange(start, stop, dtype=np.float32)


def test_user_going_on_before_the_reply_plays_reopens_the_turn() -> None:
    """'Tell me a story about a dragon | who learns to bake': ended at a short pause, the
    user went on before any reply was heard. The fragment leaves no trace; the next turn
    hears both parts as one utterance."""
    m = machine(speculative=False)
    first_audio = ramp(0, 20_800)  # 0 .. 1.3 s
    start = start_of(m.handle(UtteranceEnded(at=1.3, speech_start=0.2, speech_end=1.14,
                                             audio=first_audio)))
    m.handle(Transcript(start.turn_id, "Tell me a story about a dragon", 1.5))
    cmds = m.handle(SpeechStarted(at=1.6, speech_start=1.45))
    assert names(cmds) == ["TurnCancelled", "CancelTurn", "StateChanged"]
    cancelled = cmds[0]
    assert isinstance(cancelled, Publish) and isinstance(cancelled.event, TurnCancelled)
    assert cancelled.event.reason == REOPENED
    assert m.state is AssistantState.LISTENING
    # The continuation's audio starts with 320 ms of pre-roll (1.13 s): it overlaps the end
    # of the first utterance (which ran to 1.3 s), and the shared part is kept once.
    second_audio = ramp(18_080, 41_600)  # 1.13 .. 2.6 s
    second = start_of(m.handle(UtteranceEnded(at=2.6, speech_start=1.45, speech_end=2.44,
                                              audio=second_audio)))
    assert np.array_equal(second.audio, ramp(0, 41_600))
    respond = m.handle(Transcript(second.turn_id,
                                  "Tell me a story about a dragon who learns to bake", 2.8))[0]
    assert isinstance(respond, Respond)
    users = [msg.content for msg in respond.messages if msg.role == "user"]
    assert users == ["Tell me a story about a dragon who learns to bake"]
    # the fragment's playback slot ends later: it must not be committed
    assert m.handle(PlaybackEnded(start.turn_id, "", True, 1.7)) == []
    assert m.conversation.exchanges == []


def hello_reply_audible_at(at: float) -> TurnMachine:
    """A machine whose turn "Hello?" (0.5-1.09 s) ended and whose reply is audible at ``at``."""
    m = machine(speculative=False)
    start = start_of(m.handle(UtteranceEnded(at=1.2, speech_start=0.5, speech_end=1.09,
                                             audio=ramp(0, 19_200))))
    m.handle(Transcript(start.turn_id, "Hello?", 1.3))
    m.handle(PlaybackStarted(start.turn_id, at))
    return m


def test_speech_that_began_before_a_fast_reply_was_audible_still_reopens_the_turn() -> None:
    """"Hello, | my name is Aiko": the reply to "Hello?" became audible at 1.44 s, the
    user's next words began at 1.28 s and were confirmed at 1.45 s. They went on from their
    own pause, so the turn reopens (one request), not a barge-in leaving "Hello?" unanswered."""
    m = hello_reply_audible_at(1.44)
    cmds = m.handle(SpeechStarted(at=1.45, speech_start=1.28, over_assistant=True))
    assert names(cmds)[:2] == ["TurnCancelled", "CancelTurn"]
    cancelled = cmds[0]
    assert isinstance(cancelled, Publish) and isinstance(cancelled.event, TurnCancelled)
    assert cancelled.event.reason == REOPENED
    second = start_of(m.handle(UtteranceEnded(at=3.9, speech_start=1.28, speech_end=3.7,
                                              audio=ramp(15_360, 62_400))))
    assert np.array_equal(second.audio, ramp(0, 62_400))  # both parts, as one utterance


def test_speech_that_began_after_the_reply_was_audible_is_a_barge_in_not_a_reopen() -> None:
    m = hello_reply_audible_at(1.44)
    cmds = m.handle(SpeechStarted(at=1.7, speech_start=1.5, over_assistant=True))
    assert "CancelTurn" not in names(cmds)  # held: its words decide (echo, a cough, a request)


def test_carried_words_expire_and_muting_drops_them() -> None:
    m = machine(speculative=False)
    start_of(m.handle(ended()))
    m.handle(SpeechStarted(at=1.6, speech_start=1.45))  # reopened, nothing heard
    late = UtteranceEnded(at=30.0, speech_start=29.0, speech_end=29.84, audio=AUDIO)
    assert np.array_equal(start_of(m.handle(late)).audio, AUDIO)

    m = machine(speculative=False)
    start_of(m.handle(ended()))
    m.handle(SpeechStarted(at=1.6, speech_start=1.45))
    m.set_muted(True, 1.7)
    m.set_muted(False, 1.8)
    assert np.array_equal(start_of(m.handle(ended(2.5))).audio, AUDIO)


def test_speculative_turns_carry_the_words_until_one_is_confirmed() -> None:
    m = machine()
    start_of(m.handle(ended()))
    m.handle(SpeechStarted(at=1.6, speech_start=1.45))  # reopened
    # AUDIO covers 1.2-1.3 s; each continuation starts at 1.45 s: 0.15 s of silence between
    held = start_of(m.handle(SpeechPaused(at=2.6, speech_start=1.45, speech_end=2.44,
                                          audio=np.ones(18_400, np.float32))))
    assert held.held and held.audio.size == AUDIO.size + 2_400 + 18_400
    m.handle(SpeechResumed(at=2.7))  # the user goes on again: the held turn is dropped
    final = start_of(m.handle(UtteranceEnded(at=3.6, speech_start=1.45, speech_end=3.44,
                                             audio=np.ones(34_400, np.float32))))
    assert final.audio.size == AUDIO.size + 2_400 + 34_400
    # once confirmed, the carried words are spent
    m.handle(Transcript(final.turn_id, "x", 3.7))
    m.handle(PlaybackStarted(final.turn_id, 3.9))
    m.handle(PlaybackEnded(final.turn_id, "Sure.", False, 4.5, played_s=0.6))
    again = start_of(m.handle(UtteranceEnded(at=6.0, speech_start=5.0, speech_end=5.84,
                                             audio=AUDIO)))
    assert np.array_equal(again.audio, AUDIO)


def test_barge_in_disabled_keeps_talking() -> None:
    m = machine(speculative=False, barge_in=False)
    start = start_of(m.handle(ended()))
    m.handle(Transcript(start.turn_id, "Hi", 1.5))
    m.handle(PlaybackStarted(start.turn_id, 1.8))
    assert "CancelTurn" not in names(m.handle(SpeechStarted(at=2.5, speech_start=2.2)))


def test_empty_transcript_abandons_the_turn() -> None:
    m = machine(speculative=False)
    start = start_of(m.handle(ended()))
    cmds = m.handle(Transcript(start.turn_id, "  ", 1.5))
    assert "Respond" not in names(cmds)
    assert m.live_turn_id is None
    assert m.state is AssistantState.IDLE


def test_empty_speculative_transcript_frees_its_playback_and_is_not_restarted() -> None:
    m = machine()
    start = m.handle(paused())[1]
    assert isinstance(start, StartTurn)
    cmds = m.handle(Transcript(start.turn_id, "", 1.1))
    assert names(cmds) == ["TurnCancelled", "CancelTurn"]
    assert "StartTurn" not in names(m.handle(ended()))
    assert m.live_turn_id is None


def test_muted_ignores_speech() -> None:
    m = machine()
    assert states(m.set_muted(True, 0.0)) == [AssistantState.MUTED]
    assert m.handle(SpeechStarted(at=0.4, speech_start=0.2)) == []
    assert m.handle(paused()) == []
    assert m.handle(ended()) == []
    assert states(m.set_muted(False, 2.0)) == [AssistantState.IDLE]


def test_release_follows_the_speculative_turn_id() -> None:
    m = machine()
    start = m.handle(paused())[1]
    release = next(c for c in m.handle(ended()) if isinstance(c, ReleaseTurn))
    assert isinstance(start, StartTurn) and release.turn_id == start.turn_id


# ---- the end-of-turn call: audio model + the words at the pause ------------------------


def _judge(commands: list[Command]) -> JudgeEndOfTurn:
    return next(c for c in commands if isinstance(c, JudgeEndOfTurn))


def test_a_finished_question_ends_the_turn_although_the_audio_model_hesitates() -> None:
    m = machine()
    start = start_of(m.handle(paused(1.0)))
    m.handle(EndOfTurnScore(at=1.0, probability=0.18))  # what flat voices score
    cmds = m.handle(Transcript(start.turn_id, "Why is the sky blue?", 1.2))
    assert "Respond" in names(cmds)
    call = _judge(cmds)
    assert call.pause_at == 1.0 and call.end_now
    decided = next(c.event for c in cmds if isinstance(c, Publish)
                   and isinstance(c.event, EndOfTurnDecided))
    assert decided.probability == 0.18 and decided.text_verdict == "question"


def test_a_finished_question_the_audio_model_hears_as_unfinished_waits_the_usual_silence(
) -> None:
    m = machine()
    start = start_of(m.handle(paused(1.0)))
    m.handle(EndOfTurnScore(at=1.0, probability=0.02))  # an espeak voice's finished question
    call = _judge(m.handle(Transcript(start.turn_id, "What do you like to do for fun?", 1.2)))
    assert call.call is EndOfTurnCall.USUAL_SILENCE and not call.end_now


def test_words_that_trail_off_wait_although_the_audio_model_is_sure() -> None:
    m = machine()
    start = start_of(m.handle(paused(1.0)))
    m.handle(EndOfTurnScore(at=1.0, probability=0.95))
    call = _judge(m.handle(Transcript(start.turn_id, "I would like to go to the", 1.2)))
    assert call.call is EndOfTurnCall.LONGER_SILENCE


def test_unclear_words_follow_the_audio_model_and_confirmed_turns_need_no_call() -> None:
    m = machine()
    start = start_of(m.handle(paused(1.0)))
    m.handle(EndOfTurnScore(at=1.0, probability=0.7))
    assert _judge(m.handle(Transcript(start.turn_id, "tell me a story", 1.2))).end_now
    m = machine(speculative=False)
    start = start_of(m.handle(ended()))
    cmds = m.handle(Transcript(start.turn_id, "Why is the sky blue?", 1.5))
    assert "JudgeEndOfTurn" not in names(cmds)


# ---- barge-in: paused at the voice onset, dropped or resumed by the words ---------------


def _speaking(m: TurnMachine, text: str = "Tell me a story") -> StartTurn:
    start = start_of(m.handle(ended()))
    m.handle(Transcript(start.turn_id, text, 1.5))
    m.handle(SpeechAudio(start.turn_id, 0, "Once upon a time there was a dragon.",
                         np.zeros(16, np.float32), 16_000, 1.7))
    m.handle(PlaybackStarted(start.turn_id, 1.8))
    return start


def _over(at: float, onset: float) -> SpeechStarted:
    return SpeechStarted(at=at, speech_start=onset, over_assistant=True)


def test_barge_in_drops_the_reply_once_the_words_are_a_request() -> None:
    m = machine(speculative=False)
    first = _speaking(m)
    cmds = m.handle(_over(2.5, 2.28))
    assert names(cmds) == ["StateChanged"]  # held: the listener has paused it
    assert states(cmds) == [AssistantState.LISTENING]
    second = start_of(m.handle(ended(3.5)))
    cmds = m.handle(Transcript(second.turn_id, "Stop, tell me a joke instead.", 3.7))
    assert names(cmds) == ["BargeIn", "TurnCancelled", "CancelTurn"]
    barge = cmds[0]
    assert isinstance(barge, Publish) and isinstance(barge.event, BargeIn)
    assert barge.event.turn_id == first.turn_id and barge.event.at == 2.5
    # the interrupted reply's heard part goes into the history before the next prompt
    cmds = m.handle(PlaybackEnded(first.turn_id, "Once upon a", True, 3.7, played_s=0.8))
    assert names(cmds) == ["TurnCommitted", "Respond"]
    respond = cmds[1]
    assert isinstance(respond, Respond)
    assert [(msg.role, msg.content) for msg in respond.messages[1:]] == [
        ("user", "Tell me a story"), ("assistant", "Once upon a"),
        ("user", "Stop, tell me a joke instead.")]


def test_a_reply_cut_within_300_ms_joins_the_two_requests() -> None:
    m = machine(speculative=False)
    first = _speaking(m, "Tell me a story about a dragon")
    m.handle(_over(2.0, 1.85))
    second = start_of(m.handle(ended(3.0)))
    m.handle(Transcript(second.turn_id, "who learns to bake bread", 3.2))
    cmds = m.handle(PlaybackEnded(first.turn_id, "Once", True, 3.2, played_s=0.15))
    assert names(cmds) == ["TurnCancelled", "Respond"]
    cancelled, respond = cmds
    assert isinstance(cancelled, Publish) and isinstance(cancelled.event, TurnCancelled)
    assert cancelled.event.reason == REOPENED
    assert isinstance(respond, Respond)
    users = [msg.content for msg in respond.messages if msg.role == "user"]
    assert users == ["Tell me a story about a dragon who learns to bake bread"]
    assert m.conversation.exchanges == []


@pytest.mark.parametrize("heard", ["Thank you.", "Mm-hmm.", "Yeah.", "",
                                   "Once upon a time there was"])
def test_echo_hallucinations_and_backchannels_never_interrupt(heard: str) -> None:
    m = machine(speculative=False)
    first = _speaking(m)
    m.handle(_over(2.5, 2.28))
    second = start_of(m.handle(ended(3.0)))
    cmds = m.handle(Transcript(second.turn_id, heard, 3.2))
    assert "BargeIn" not in names(cmds) and "Respond" not in names(cmds)
    assert "ResumePlayback" in names(cmds) and "PlaybackResumed" in names(cmds)
    assert m.live_turn_id == first.turn_id and m.state is AssistantState.SPEAKING
    # the reply then plays to its end and is committed whole
    cmds = m.handle(PlaybackEnded(first.turn_id, "Once upon a time.", False, 6.0, played_s=4))
    assert names(cmds)[0] == "TurnCommitted"


def _played_on_after(m: TurnMachine, first_words: str) -> StartTurn:
    """A voice over the reply whose first part (to its pause) was not the user's words:
    the reply plays on. Returns the reply's turn."""
    first = _speaking(m)
    m.handle(_over(2.5, 2.28))
    spec = start_of(m.handle(SpeechPaused(at=3.0, speech_start=2.28, speech_end=2.84,
                                          audio=AUDIO)))
    cmds = m.handle(Transcript(spec.turn_id, first_words, 3.2))
    assert "ResumePlayback" in names(cmds) and m.live_turn_id == first.turn_id
    return first


@pytest.mark.parametrize("first_words", ["", "Once upon a time there was", "Mm-hmm."])
def test_a_voice_that_goes_on_after_words_that_were_not_the_users_is_heard(
        first_words: str) -> None:
    """ "Stop." heard as nothing (or echo, or "mm-hm"), then "What time is it?" in the same
    breath: the listener pauses the reply again and the machine holds it; the words of
    the whole utterance drop it. Before, the reply talked over them and they were lost."""
    m = machine()
    first = _played_on_after(m, first_words)
    cmds = m.handle(SpeechResumed(at=3.4, over_assistant=True))
    assert states(cmds) == [AssistantState.LISTENING] and "ResumePlayback" not in names(cmds)
    assert m.next_deadline() is None  # only words drop it: the echo may be leaking still
    second = start_of(m.handle(UtteranceEnded(at=5.0, speech_start=2.28, speech_end=4.8,
                                              audio=AUDIO)))
    cmds = m.handle(Transcript(second.turn_id, f"{first_words} What time is it?", 5.3))
    assert names(cmds) == ["BargeIn", "TurnCancelled", "CancelTurn"]
    barge = cmds[0]
    assert isinstance(barge, Publish) and isinstance(barge.event, BargeIn)
    assert barge.event.turn_id == first.turn_id and barge.event.at == 3.4


def test_echo_that_goes_on_after_an_echo_verdict_lets_the_reply_play_on_again() -> None:
    m = machine()
    first = _played_on_after(m, "Once upon a time there was")
    m.handle(SpeechResumed(at=3.4, over_assistant=True))
    second = start_of(m.handle(UtteranceEnded(at=4.4, speech_start=2.28, speech_end=4.2,
                                              audio=AUDIO)))
    cmds = m.handle(Transcript(second.turn_id, "Once upon a time there was a dragon.", 4.6))
    assert "BargeIn" not in names(cmds) and "ResumePlayback" in names(cmds)
    assert m.live_turn_id == first.turn_id and m.state is AssistantState.SPEAKING


def test_a_resume_the_listener_paused_for_with_nothing_to_hold_plays_on() -> None:
    m = machine(speculative=False)
    assert names(m.handle(SpeechResumed(at=0.5, over_assistant=True))) == ["ResumePlayback"]
    assert m.handle(SpeechResumed(at=0.6)) == []


def test_speech_that_goes_on_over_the_reply_interrupts_it_before_its_words_are_in() -> None:
    m = machine(speculative=False)
    first = _speaking(m)
    m.handle(_over(2.5, 2.28))
    assert names(m.tick(3.0)) == []
    assert m.next_deadline() == pytest.approx(2.5 + 1.2)
    cmds = m.tick(3.75)
    assert names(cmds) == ["BargeIn", "TurnCancelled", "CancelTurn"]
    cancel = cmds[2]
    assert isinstance(cancel, CancelTurn) and cancel.turn_id == first.turn_id


def test_a_failed_transcription_never_leaves_the_reply_paused() -> None:
    m = machine(speculative=False)
    _speaking(m)
    m.handle(_over(2.5, 2.28))
    second = start_of(m.handle(ended(3.0)))
    cmds = m.handle(StageFailed("asr", "boom", turn_id=second.turn_id))
    assert "ResumePlayback" in names(cmds)


def test_speech_near_a_silent_assistant_resumes_whatever_was_paused() -> None:
    m = machine(speculative=False)
    cmds = m.handle(_over(0.5, 0.3))
    assert "ResumePlayback" in names(cmds)


def test_words_wait_for_the_audio_models_score_when_one_is_coming() -> None:
    """ASR can beat the end-of-turn model under load: the call waits for both."""
    m = machine()
    start = start_of(m.handle(SpeechPaused(at=1.0, speech_start=0.2, speech_end=0.84,
                                           audio=AUDIO, score_follows=True)))
    cmds = m.handle(Transcript(start.turn_id, "set a timer for the pasta", 1.1))
    assert "Respond" in names(cmds) and "JudgeEndOfTurn" not in names(cmds)
    call = _judge(m.handle(EndOfTurnScore(at=1.0, probability=0.97)))
    assert call.end_now  # unclear words, a sure audio model


# ---- a backchannel just after a reply acknowledges it -----------------------------------


def _after_reply(m: TurnMachine, said: str, gap_s: float, heard: str) -> list[Command]:
    """A reply saying ``said`` plays and ends at 4.0; ``gap_s`` later a voice says ``heard``."""
    start = start_of(m.handle(ended()))
    m.handle(Transcript(start.turn_id, "Tell me about Paris.", 1.5))
    m.handle(SpeechAudio(start.turn_id, 0, said, np.zeros(16, np.float32), 16_000, 1.7))
    m.handle(PlaybackStarted(start.turn_id, 1.8))
    m.handle(PlaybackEnded(start.turn_id, said, False, 4.0, played_s=2.2))
    onset = 4.0 + gap_s
    m.handle(SpeechStarted(at=onset + 0.2, speech_start=onset))
    second = start_of(m.handle(UtteranceEnded(at=onset + 1.0, speech_start=onset,
                                              speech_end=onset + 0.5, audio=AUDIO)))
    return m.handle(Transcript(second.turn_id, heard, onset + 1.1))


@pytest.mark.parametrize("heard", ["Yeah.", "Oh, okay.", "Yeah, yeah.", "Ha ha ha!",
                                   "(laughs)", "Mm-hmm, right."])
def test_a_backchannel_just_after_a_statement_gets_no_answer_of_its_own(heard: str) -> None:
    m = machine(speculative=False)
    cmds = _after_reply(m, "Paris is the capital of France.", 0.6, heard)
    assert "Respond" not in names(cmds) and "TurnCancelled" in names(cmds)
    assert m.state is AssistantState.IDLE
    assert m.conversation.exchanges == [("Tell me about Paris.",
                                         "Paris is the capital of France.")]


@pytest.mark.parametrize(("said", "gap_s", "heard"), [
    ("Would you like to hear more?", 0.6, "Yes."),  # an answer to its question
    ("Paris is the capital of France.", 3.0, "Okay."),  # long after: the user's turn
    ("Paris is the capital of France.", 0.6, "Okay, and Rome?"),  # more than a backchannel
])
def test_answers_and_later_words_after_a_reply_are_requests(
        said: str, gap_s: float, heard: str) -> None:
    m = machine(speculative=False)
    assert "Respond" in names(_after_reply(m, said, gap_s, heard))
