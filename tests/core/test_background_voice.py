"""A quieter voice that is not the user's (a television): known by its level once the
recognizer has told whose voice each turn was, then taken for silence by the listener."""

from __future__ import annotations

import numpy as np

from app.adapters.fakes import FakeVoiceActivity
from app.core.background_voice import (
    ENVELOPE_FRAMES,
    FORGET_AFTER_S,
    BackgroundVoice,
    frame_levels,
    speech_levels,
)
from app.core.endpointing import EndpointConfig, Endpointer
from app.core.events import FloatAudio, PipelineEvent, SpeechStarted, UtteranceEnded
from app.core.listener import Listener
from app.core.listener_jobs import MicBlock
from app.core.playback import PlaybackQueue

RATE = 16_000
USER_RMS, TV_RMS = 0.3, 0.03  # -10.5 and -30.5 dBFS: the television 20 dB under the user


def voice(seconds: float, rms: float, seed: int = 0) -> FloatAudio:
    """Speech-like: noise whose loudness rises and falls like syllables (5 a second)."""
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    envelope = 0.55 + 0.45 * np.sin(2 * np.pi * 5 * t)
    noise = np.random.default_rng(seed).standard_normal(n)
    signal = noise * envelope
    return (signal / np.sqrt(np.mean(signal**2)) * rms).astype(np.float32)


def silence(seconds: float) -> FloatAudio:
    return np.zeros(int(seconds * RATE), np.float32)


def knowing_both(at: float = 0.0) -> BackgroundVoice:
    background = BackgroundVoice()
    background.heard_user(np.concatenate([silence(0.3), voice(2.0, USER_RMS), silence(0.3)]))
    background.heard_other(voice(3.0, TV_RMS, seed=1), at)
    return background


def test_levels_are_per_32_ms_frame_and_speech_leaves_out_the_pauses() -> None:
    audio = np.concatenate([silence(0.5), voice(1.0, 0.1)])
    levels = frame_levels(audio)
    assert levels.size == audio.size // 512
    assert levels[0] < -150  # digital silence
    speech = speech_levels(audio)
    assert speech.size < levels.size and float(np.median(speech)) > -25


def test_no_rule_until_both_voices_are_known() -> None:
    background = BackgroundVoice()
    assert background.floor_db(0.0) is None
    background.heard_other(voice(2.0, TV_RMS), 0.0)
    assert background.floor_db(0.0) is None  # nobody's level to compare with
    background.heard_user(voice(2.0, USER_RMS))
    floor = background.floor_db(1.0)
    assert floor is not None
    assert background.background_db is not None and background.user_db is not None
    assert background.background_db < floor < background.user_db


def test_another_voice_as_loud_as_the_user_is_never_taken_for_the_background() -> None:
    background = BackgroundVoice()
    background.heard_user(voice(2.0, USER_RMS))
    background.heard_other(voice(2.0, USER_RMS * 0.8, seed=2), 0.0)  # a flatmate close by
    assert background.floor_db(0.0) is None
    assert not background.masks(voice(0.032, USER_RMS * 0.5), True, 0.1)


def test_the_other_voice_is_forgotten_when_it_is_no_longer_heard() -> None:
    background = knowing_both(at=10.0)
    assert background.floor_db(10.0 + FORGET_AFTER_S - 1) is not None
    assert background.floor_db(10.0 + FORGET_AFTER_S + 1) is None


def test_its_frames_are_masked_and_a_run_of_them_keeps_it_known() -> None:
    background = knowing_both(at=0.0)
    tv_frame, user_frame = voice(0.032, TV_RMS), voice(0.032, USER_RMS)
    assert background.masks(tv_frame, True, 1.0)
    assert not background.masks(tv_frame, False, 1.032)  # not voiced: nothing to mask
    assert background.heard_at == 0.0  # two frames: maybe a soft syllable of the user's
    assert not background.masks(user_frame, True, 1.064)
    # the user's syllable holds the envelope up for a syllable's length after it
    held = [background.masks(tv_frame, True, 1.096 + 0.032 * k) for k in range(ENVELOPE_FRAMES)]
    assert held == [False] * (ENVELOPE_FRAMES - 1) + [True]
    for k in range(20):  # 0.64 s of the television talking on
        background.masks(tv_frame, True, 50.0 + 0.032 * k)
    assert background.heard_at > 50.0
    assert background.floor_db(50.0 + FORGET_AFTER_S - 1) is not None


def listen(audio: FloatAudio, background: BackgroundVoice) -> list[PipelineEvent]:
    events: list[PipelineEvent] = []
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(EndpointConfig()),
                        PlaybackQueue(RATE, events.append), background=background)
    for start in range(0, audio.size, 1024):
        listener.handle(MicBlock(audio[start:start + 1024]))
    return events


def test_a_known_quieter_voice_opens_no_turn() -> None:
    tv = np.concatenate([voice(4.0, TV_RMS, seed=3), silence(1.0)])
    assert any(isinstance(e, SpeechStarted) for e in listen(tv, BackgroundVoice()))
    assert not any(isinstance(e, SpeechStarted) for e in listen(tv, knowing_both()))


def test_a_request_over_the_television_ends_when_the_user_stops() -> None:
    """The television talks for 8 s; the user asks something 2-4 s into it. Before, the turn
    ended only when the television paused; now half a second after the user stops."""
    tv = voice(8.0, TV_RMS, seed=4)
    mixed = tv.copy()
    user_from, user_s = 2 * RATE, 2.0
    mixed[user_from:user_from + int(user_s * RATE)] += voice(user_s, USER_RMS, seed=5)
    audio = np.concatenate([mixed, silence(1.0)])
    user_end = user_from / RATE + user_s

    [ended] = [e for e in listen(audio, knowing_both()) if isinstance(e, UtteranceEnded)]
    assert user_end + 0.3 < ended.at < user_end + 0.8  # 480 ms, and the envelope's 256
    assert abs(ended.speech_start - user_from / RATE) < 0.1  # the user's voice, not the TV's

    unknown = [e for e in listen(audio, BackgroundVoice()) if isinstance(e, UtteranceEnded)]
    assert unknown and unknown[-1].at > 8.0  # without knowing it: when the television stops


def test_the_users_own_words_taken_for_another_voice_do_not_lift_the_bar() -> None:
    """A second of the user's request under the television makes a poor voice print, and may
    be judged another voice's: it is as loud as the user, so the television's bar stays."""
    background = knowing_both(at=0.0)
    floor = background.floor_db(1.0)
    background.heard_other(voice(1.0, USER_RMS, seed=6), 2.0)
    assert background.floor_db(2.0) == floor



def test_a_voice_as_loud_as_the_user_over_the_television_is_over_it() -> None:
    background = knowing_both(at=0.0)
    request = voice(2.0, USER_RMS, seed=10) + voice(2.0, TV_RMS, seed=11)
    assert background.over_it(request, 1.0)
    assert not background.over_it(voice(2.0, TV_RMS, seed=12), 1.0)  # the television
    assert not BackgroundVoice().over_it(request, 1.0)  # no television known: as ever
    assert not background.over_it(request, FORGET_AFTER_S + 1.0)  # long gone
