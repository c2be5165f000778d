"""The listener stage, called directly: turn detection at the pause, the echo reference by time."""

from __future__ import annotations

import numpy as np

from app.adapters.fakes import FakeTurnDetector, FakeVoiceActivity
from app.core.barge_in import BargeInPolicy
from app.core.endpointing import EndpointConfig, Endpointer
from app.core.events import FloatAudio, PipelineEvent, UtteranceEnded
from app.core.listener import Listener
from app.core.listener_jobs import ListenerJob, MicBlock, to_pipeline_rate
from app.core.playback import PlaybackQueue
from app.core.telemetry import InputLevel, level_db
from app.core.utterance_text import EndOfTurnCall

CFG = EndpointConfig(
    min_speech_ms=64, pause_ms=96, end_of_turn_ms=480, unfinished_end_of_turn_ms=960
)


def loud(seconds: float) -> FloatAudio:
    return np.full(int(seconds * 16_000), 0.3, dtype=np.float32)


def quiet(seconds: float) -> FloatAudio:
    return np.zeros(int(seconds * 16_000), dtype=np.float32)


def listen(blocks: list[object], **kwargs: object) -> list[PipelineEvent]:
    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback, **kwargs)  # type: ignore[arg-type]
    for block in blocks:
        listener.handle(block)
    return events


def end_times(events: list[PipelineEvent]) -> list[float]:
    return [e.at for e in events if isinstance(e, UtteranceEnded)]


def test_confident_turn_detector_ends_the_turn_at_the_first_pause() -> None:
    blocks = [MicBlock(loud(1.0)), MicBlock(quiet(1.0))]
    detector = FakeTurnDetector(0.9)
    [ended_at] = end_times(listen(blocks, turn_detector=detector))
    assert detector.calls == 1
    assert ended_at < 1.0 + 0.2  # pause (96 ms) instead of 480 ms


def test_unfinished_sounding_user_gets_more_time() -> None:
    blocks = [MicBlock(loud(1.0)), MicBlock(quiet(1.5))]
    [ended_at] = end_times(listen(blocks, turn_detector=FakeTurnDetector(0.1)))
    assert ended_at > 1.0 + 0.9


def test_without_a_detector_the_silence_rule_applies() -> None:
    blocks = [MicBlock(loud(1.0)), MicBlock(quiet(1.0))]
    [ended_at] = end_times(listen(blocks))
    assert 1.0 + 0.45 < ended_at < 1.0 + 0.55


class RecordingEcho:
    def __init__(self) -> None:
        self.calls: list[tuple[str, FloatAudio]] = []

    def add_reference(self, played: FloatAudio) -> None:
        self.calls.append(("reference", played.copy()))

    def process(self, captured: FloatAudio) -> FloatAudio:
        self.calls.append(("capture", captured.copy()))
        return captured

    def reset(self) -> None:
        return None


def test_echo_canceller_gets_the_reference_for_the_time_each_capture_block_covers() -> None:
    """The speaker's copy arrives all at once, long before it plays (a feeder's lead); the
    canceller gets it piece by piece with the capture recorded while it played, whatever
    the arrival order: the delay it learns is the room's, not the listener's lag."""
    from app.core.echo_alignment import REFERENCE_LEAD_S

    echo = RecordingEcho()
    events: list[PipelineEvent] = []
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG),
                        PlaybackQueue(24_000, events.append), echo=echo)
    ramp = np.arange(24_000 // 10, dtype=np.float32) / 24_000  # 0.1 s at the speaker's rate
    assert listener.echo_in is not None
    # heard from 10.2 s plus the lead the canceller is given (the reference goes in first)
    listener.echo_in.played.write(ramp, 10.3 + REFERENCE_LEAD_S)
    block = 1_600  # 0.1 s
    for index in range(5):  # recorded 10.0 .. 10.5 s
        listener.handle(MicBlock(quiet(0.1), captured_at=10.0 + (index + 1) * 0.1))
    references = [audio for kind, audio in echo.calls if kind == "reference"]
    captures = [audio for kind, audio in echo.calls if kind == "capture"]
    assert len(captures) == 5 and len(references) == 3
    # it went in just before the capture recorded 10.2 .. 10.3 s, silence after it (the
    # two streams kept in step), nothing before it
    assert [kind for kind, _ in echo.calls].index("reference") == 2
    expected = to_pipeline_rate(ramp, 24_000)
    assert references[0].size == block
    assert np.allclose(references[0], expected, atol=1e-4)
    assert not np.any(references[1]) and not np.any(references[2])


def test_reference_resampling_keeps_duration() -> None:
    tone = np.sin(np.arange(24_000) / 24_000 * 2 * np.pi * 200).astype(np.float32)
    out = to_pipeline_rate(tone, 24_000)
    assert out.size == 16_000
    assert abs(float(np.max(out)) - 1.0) < 0.01


# ---- the end-of-turn call from the words (speculative turns) ---------------------------


def _pause_at(events: list[PipelineEvent]) -> float:
    from app.core.events import SpeechPaused

    return next(e.at for e in events if isinstance(e, SpeechPaused))


def _paused_deferring_listener(events: list[PipelineEvent], probability: float) -> Listener:
    """A listener that leaves the end-of-turn call to the words, after 1 s of speech and
    200 ms of silence (paused: the audio model scored ``probability``)."""
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG),
                        PlaybackQueue(16_000, events.append),
                        turn_detector=FakeTurnDetector(probability), defer_to_transcript=True)
    listener.handle(MicBlock(loud(1.0)))
    listener.handle(MicBlock(quiet(0.2)))
    return listener


def test_deferring_listener_reports_the_score_and_leaves_the_call_to_the_words() -> None:
    from app.core.events import EndOfTurnScore
    from app.core.turn_commands import JudgeEndOfTurn

    events: list[PipelineEvent] = []
    listener = _paused_deferring_listener(events, 0.9)
    assert [e.probability for e in events if isinstance(e, EndOfTurnScore)] == [0.9]
    assert end_times(events) == []  # sure-sounding, but the words are not in yet
    listener.handle(JudgeEndOfTurn(pause_at=_pause_at(events), call=EndOfTurnCall.END_NOW))
    [ended_at] = end_times(events)
    assert ended_at < 1.0 + 0.25


def test_a_call_for_an_old_pause_is_ignored_and_unfinished_words_wait() -> None:
    from app.core.turn_commands import JudgeEndOfTurn

    events: list[PipelineEvent] = []
    listener = _paused_deferring_listener(events, 0.9)
    listener.handle(JudgeEndOfTurn(pause_at=0.5, call=EndOfTurnCall.END_NOW))  # not this pause
    assert end_times(events) == []
    listener.handle(JudgeEndOfTurn(pause_at=_pause_at(events), call=EndOfTurnCall.LONGER_SILENCE))
    listener.handle(MicBlock(quiet(1.0)))
    [ended_at] = end_times(events)
    assert ended_at > 1.0 + 0.9  # the longer wait, although the audio model was sure


def test_a_finished_question_heard_as_unfinished_ends_after_the_usual_silence() -> None:
    """The audio model's doubt asked for the longer wait; the words (a finished question)
    take it back to the usual silence, so the reply is not held for the longer one."""
    from app.core.turn_commands import JudgeEndOfTurn

    events: list[PipelineEvent] = []
    listener = _paused_deferring_listener(events, 0.02)
    listener.handle(JudgeEndOfTurn(pause_at=_pause_at(events), call=EndOfTurnCall.USUAL_SILENCE))
    listener.handle(MicBlock(quiet(1.0)))
    [ended_at] = end_times(events)
    assert 1.0 + 0.48 <= ended_at < 1.0 + 0.6  # the usual 480 ms, not the longer 960 ms


def test_without_an_audio_model_unfinished_words_still_wait_the_longer_silence() -> None:
    from app.core.turn_commands import JudgeEndOfTurn

    events: list[PipelineEvent] = []
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG),
                        PlaybackQueue(16_000, events.append), defer_to_transcript=True)
    listener.handle(MicBlock(loud(1.0)))
    listener.handle(MicBlock(quiet(0.2)))
    listener.handle(JudgeEndOfTurn(pause_at=_pause_at(events), call=EndOfTurnCall.LONGER_SILENCE))
    listener.handle(MicBlock(quiet(1.0)))
    [ended_at] = end_times(events)
    assert ended_at > 1.0 + 0.9


class HearsTheFallAfterASilence:
    """An end-of-turn model that hears a finished sentence only once ``quiet_s`` of
    silence follows the voice (as Smart Turn does with people's falling voices), or never."""

    def __init__(self, quiet_s: float | None) -> None:
        self.quiet_s = quiet_s
        self.calls = 0

    def complete_probability(self, audio: FloatAudio) -> float:
        self.calls += 1
        voiced = np.flatnonzero(np.abs(audio) > 0.01)
        silence_s = (audio.size - 1 - int(voiced[-1])) / 16_000 if voiced.size else 0.0
        return 0.9 if self.quiet_s is not None and silence_s >= self.quiet_s else 0.1


def _sentence_heard_unfinished(events: list[PipelineEvent], detector: object) -> Listener:
    """1 s of speech, 200 ms of silence; the words then say finished: look again."""
    from app.core.turn_commands import JudgeEndOfTurn

    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG),
                        PlaybackQueue(16_000, events.append),
                        turn_detector=detector, defer_to_transcript=True)  # type: ignore[arg-type]
    listener.handle(MicBlock(loud(1.0)))
    listener.handle(MicBlock(quiet(0.2)))
    listener.handle(JudgeEndOfTurn(pause_at=_pause_at(events), call=EndOfTurnCall.LOOK_AGAIN))
    return listener


def test_a_finished_sentence_heard_finished_on_the_second_look_ends_then() -> None:
    events: list[PipelineEvent] = []
    detector = HearsTheFallAfterASilence(quiet_s=0.3)
    listener = _sentence_heard_unfinished(events, detector)
    listener.handle(MicBlock(quiet(1.0)))
    [ended_at] = end_times(events)
    look = CFG.look_again_ms / 1000
    assert 1.0 + look <= ended_at < 1.0 + look + 0.05  # not the longer 960 ms
    assert listener.pauses.second_looks == 1 and detector.calls == 2


def test_a_voice_still_held_on_the_second_look_waits_the_longer_silence() -> None:
    events: list[PipelineEvent] = []
    detector = HearsTheFallAfterASilence(quiet_s=None)
    listener = _sentence_heard_unfinished(events, detector)
    listener.handle(MicBlock(quiet(1.0)))
    [ended_at] = end_times(events)
    assert ended_at > 1.0 + 0.9
    assert listener.pauses.second_looks == 0 and detector.calls == 2


def test_the_user_going_on_before_the_second_look_cancels_it() -> None:
    events: list[PipelineEvent] = []
    detector = HearsTheFallAfterASilence(quiet_s=0.3)
    listener = _sentence_heard_unfinished(events, detector)
    listener.handle(MicBlock(loud(0.5)))  # went on after 200 ms: a new pause, no look asked
    listener.handle(MicBlock(quiet(0.7)))
    assert end_times(events) == []  # this pause waits the longer silence (no call yet)
    assert detector.calls == 2  # the two pauses' scores, and no second look


def test_a_look_asked_for_after_its_silence_looks_at_once() -> None:
    """Slow words: the call arrives when the silence has already passed the look."""
    from app.core.turn_commands import JudgeEndOfTurn

    events: list[PipelineEvent] = []
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG),
                        PlaybackQueue(16_000, events.append),
                        turn_detector=HearsTheFallAfterASilence(quiet_s=0.3),
                        defer_to_transcript=True)
    listener.handle(MicBlock(loud(1.0)))
    listener.handle(MicBlock(quiet(0.5)))
    assert end_times(events) == []
    listener.handle(JudgeEndOfTurn(pause_at=_pause_at(events), call=EndOfTurnCall.LOOK_AGAIN))
    [ended_at] = end_times(events)
    assert ended_at < 1.0 + 0.55


# ---- barge-in: the reply pauses at the voice onset ----------------------------------------


def _playing_listener(events: list[PipelineEvent]) -> tuple[Listener, PlaybackQueue]:
    playback = PlaybackQueue(16_000, events.append)
    playback.begin(1, held=False)
    playback.enqueue(1, np.full(16_000 * 5, 0.2, np.float32), "A long reply.")
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback,
                        barge_in=BargeInPolicy())
    return listener, playback


def _play_and_hear(listener: Listener, playback: PlaybackQueue, audio: FloatAudio) -> None:
    for start in range(0, audio.size, 512):
        playback.pull(512)
        listener.handle(MicBlock(audio[start:start + 512]))


def test_reply_pauses_within_a_hundred_ms_of_the_voice_and_speech_is_marked() -> None:
    from app.core.events import PlaybackPaused, SpeechStarted

    events: list[PipelineEvent] = []
    listener, playback = _playing_listener(events)
    _play_and_hear(listener, playback, np.concatenate([quiet(0.5), loud(0.6)]))
    (paused,) = [e for e in events if isinstance(e, PlaybackPaused)]
    assert 0.0 < paused.at - paused.speech_start <= 0.1
    assert playback.paused
    (started,) = [e for e in events if isinstance(e, SpeechStarted)]
    assert started.over_assistant  # the machine decides now: no resume from the listener


def test_a_cough_costs_a_dip_not_the_reply() -> None:
    from app.core.events import PlaybackPaused, PlaybackResumed

    events: list[PipelineEvent] = []
    listener, playback = _playing_listener(events)
    _play_and_hear(listener, playback, np.concatenate([quiet(0.5), loud(0.1), quiet(0.5)]))
    assert [type(e) for e in events if isinstance(e, PlaybackPaused | PlaybackResumed)] == [
        PlaybackPaused, PlaybackResumed]
    assert not playback.paused


def test_a_voice_going_on_over_a_reply_let_play_on_pauses_it_again() -> None:
    """The turn machine let the reply play on at the voice's pause (its first words were
    echo, "mm-hm" or nothing heard); when the voice goes on, the reply pauses again at
    once and the machine is told to hold it."""
    from app.core.events import PlaybackPaused, SpeechPaused, SpeechResumed

    events: list[PipelineEvent] = []
    listener, playback = _playing_listener(events)
    _play_and_hear(listener, playback, np.concatenate([quiet(0.5), loud(0.3), quiet(0.2)]))
    assert playback.paused and any(isinstance(e, SpeechPaused) for e in events)
    playback.resume()  # the machine's ResumePlayback: not the user's words
    before = len(events)
    _play_and_hear(listener, playback, loud(0.2))
    later = events[before:]
    (resumed,) = [e for e in later if isinstance(e, SpeechResumed)]
    assert resumed.over_assistant
    (paused,) = [e for e in later if isinstance(e, PlaybackPaused)]
    assert paused.at - resumed.at < 0.05 and playback.paused


def test_a_voice_going_on_over_a_paused_reply_is_an_ordinary_resume() -> None:
    from app.core.events import PlaybackPaused, SpeechResumed

    events: list[PipelineEvent] = []
    listener, playback = _playing_listener(events)
    _play_and_hear(listener, playback,
                   np.concatenate([quiet(0.5), loud(0.3), quiet(0.2), loud(0.2)]))
    (resumed,) = [e for e in events if isinstance(e, SpeechResumed)]
    assert not resumed.over_assistant  # still held: nothing to pause again
    assert len([e for e in events if isinstance(e, PlaybackPaused)]) == 1


class AttenuatingEcho:
    """A canceller that takes ``keep`` of the signal through (1.0: a user's voice passes)."""

    output_delay_samples = 0

    def __init__(self) -> None:
        self.keep = 0.02

    def add_reference(self, played: FloatAudio) -> None:
        return None

    def process(self, captured: FloatAudio) -> FloatAudio:
        return (captured * self.keep).astype(np.float32)

    def reset(self) -> None:
        return None


def test_echo_residue_over_the_reply_is_not_speech_but_a_voice_over_it_is() -> None:
    from app.core.events import SpeechStarted

    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    playback.begin(1, held=False)
    playback.enqueue(1, np.full(16_000 * 5, 0.2, np.float32), "A long reply.")
    echo = AttenuatingEcho()
    # the fake VAD hears 1 % of full scale as speech: residue at 2 % of 0.9 would count
    listener = Listener(events.append, FakeVoiceActivity(speech_rms=0.01), Endpointer(CFG),
                        playback, echo=echo)
    residue = np.full(16_000, 0.9, np.float32)
    for start in range(0, residue.size, 512):
        playback.pull(512)
        listener.handle(MicBlock(residue[start:start + 512]))
    assert not [e for e in events if isinstance(e, SpeechStarted)]
    assert listener.echo_residue_frames > 10
    echo.keep = 0.6  # the user talks: the canceller lets most of it through
    for start in range(0, residue.size, 512):
        playback.pull(512)
        listener.handle(MicBlock(residue[start:start + 512]))
    assert [e for e in events if isinstance(e, SpeechStarted)]


def _reply_ready_at(start_s: float, heard: FloatAudio,
                    listener: Listener, playback: PlaybackQueue) -> FloatAudio:
    """Feed ``heard`` to the listener in 32 ms blocks while the speaker pulls as many; a
    released reply is queued ``start_s`` in. Returns what the speaker played."""
    played = []
    for start in range(0, heard.size, 512):
        if start == int(start_s * 16_000) // 512 * 512:
            playback.begin(1, held=False)
            playback.enqueue(1, np.full(16_000 * 5, 0.2, np.float32), "A reply.")
        played.append(playback.pull(512))
        listener.handle(MicBlock(heard[start:start + 512]))
    return np.concatenate(played)


def test_a_reply_that_starts_while_the_user_talks_waits_for_them() -> None:
    from app.core.events import PlaybackStarted, SpeechStarted

    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback,
                        barge_in=BargeInPolicy())
    # the user has been talking for half a second when a reply is ready
    played = _reply_ready_at(0.5, loud(1.0), listener, playback)
    (started,) = [e for e in events if isinstance(e, SpeechStarted)]
    assert not started.over_assistant
    assert not played.any() and not [e for e in events if isinstance(e, PlaybackStarted)]
    played = _reply_ready_at(9.0, quiet(1.0), listener, playback)
    assert played.any()  # nobody dropped it: it plays once the user is done


def test_a_reply_ready_at_a_voice_onset_is_silent_from_the_first_voiced_frame() -> None:
    """Speech confirmed 64 ms (here; 160 ms in the app) after it began reopens a turn whose
    reply was not audible when it began: none of that reply may be heard meanwhile."""
    from app.core.events import PlaybackStarted, SpeechStarted

    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback,
                        barge_in=BargeInPolicy())
    # one voiced frame heard, the reply is ready on the next block
    played = _reply_ready_at(0.544, np.concatenate([quiet(0.512), loud(0.3)]), listener,
                             playback)
    (started,) = [e for e in events if isinstance(e, SpeechStarted)]
    assert started.speech_start == 0.512
    assert not played.any() and not [e for e in events if isinstance(e, PlaybackStarted)]


def test_a_reply_that_slips_in_after_a_voice_began_pauses_at_its_first_frame() -> None:
    """Ready between the voice's first sample and the listener hearing its frame, the reply
    starts (the hold comes a frame late); it is paused on that frame, not 64 ms later."""
    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback,
                        barge_in=BargeInPolicy())
    heard = np.concatenate([quiet(0.512), loud(0.3)])
    played = []
    for start in range(0, heard.size, 512):
        if start == 8_192:  # the voice's first frame: the reply is ready half-way through it
            played.append(playback.pull(256))
            playback.begin(1, held=False)
            playback.enqueue(1, np.full(16_000 * 5, 0.2, np.float32), "A reply.")
            played.append(playback.pull(256))
        else:
            played.append(playback.pull(512))
        listener.handle(MicBlock(heard[start:start + 512]))
    sound = np.flatnonzero(np.concatenate(played)) / 16_000
    assert sound.size and sound[0] >= 0.528 and sound[-1] < 0.544  # that half-frame only
    assert playback.paused


def test_a_reply_held_for_a_click_plays_once_it_dies_away() -> None:
    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback,
                        barge_in=BargeInPolicy())
    click = np.concatenate([quiet(0.512), loud(0.032), quiet(0.5)])  # one 32 ms frame
    played = _reply_ready_at(0.544, click, listener, playback)
    first = np.flatnonzero(played)[0] / 16_000
    assert 0.544 < first <= 0.544 + 0.2  # held until the click no longer may be speech


def test_digital_silence_is_not_run_through_the_vad() -> None:
    class CountingVad(FakeVoiceActivity):
        calls = 0

        def probability(self, frame: FloatAudio) -> float:
            CountingVad.calls += 1
            return super().probability(frame)

    events: list[PipelineEvent] = []
    listener = Listener(events.append, CountingVad(), Endpointer(CFG),
                        PlaybackQueue(16_000, events.append))
    listener.handle(MicBlock(quiet(1.0)))
    assert CountingVad.calls == 0
    listener.handle(MicBlock(loud(0.5)))
    assert CountingVad.calls > 0 and [e for e in events if type(e).__name__ == "SpeechStarted"]


def test_the_meter_hears_of_a_level_only_when_it_moves_or_once_a_second() -> None:
    """A silent microphone sent the meter a level 20 times a second, each one waking the
    controller thread; now a steady level is resent once a second, a change at once."""
    levels = [e for e in listen([MicBlock(quiet(10.0))]) if isinstance(e, InputLevel)]
    assert len(levels) <= 12 + 1 + 10  # the first, its trail, then one a second
    steady_noise = np.full(16_000 * 2, 0.001, dtype=np.float32)
    events = listen([MicBlock(quiet(0.5)), MicBlock(steady_noise), MicBlock(loud(0.2))])
    sent = [round(e.level, 4) for e in events if isinstance(e, InputLevel)]
    assert sent[0] == 0.0
    assert 0.001 in sent  # the noise appeared: sent at once, not a second later
    assert sent.count(0.001) <= 12 + 3  # its trail, then only as a refresh
    assert sent[-1] == 0.3  # the voice moves the meter at once

    # after the voice, the meter is fed long enough to ease down to the silence
    after = listen([MicBlock(loud(0.5)), MicBlock(quiet(2.0))])
    meter = 1.0
    for event in after:
        if isinstance(event, InputLevel):
            target = (level_db(event.level) + 60.0) / 60.0
            meter = target if target > meter else meter * 0.7 + target * 0.3  # as MicMeter
    assert meter < 0.05


def test_an_idle_listener_takes_blocks_a_few_at_a_time_but_never_while_anyone_speaks() -> None:
    from app.core.listener import IDLE_PAUSE_S

    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback)
    listener.handle(MicBlock(quiet(0.5)))
    assert listener.idle_pause_s() == IDLE_PAUSE_S  # silence, nothing playing
    listener.handle(MicBlock(loud(0.2)))
    assert listener.endpointer.in_speech and listener.idle_pause_s() == 0.0  # the user talks
    listener.handle(MicBlock(quiet(1.0)))
    assert listener.idle_pause_s() == IDLE_PAUSE_S  # the speech ended, no turn began
    playback.begin(1, held=False)
    assert listener.idle_pause_s() == 0.0  # a turn in flight: the user may go on at once
    playback.enqueue(1, loud(1.0), "Hello.")
    playback.pull(320, 0.0)
    assert playback.speaking and listener.idle_pause_s() == 0.0  # barge-in must be quick


def test_an_idle_listener_takes_the_microphone_a_few_blocks_at_a_time() -> None:
    """The capture callback wakes no one: the listener reads its ring, every 192 ms while
    nothing is going on (one wake-up for six blocks), every 10 ms with a turn in flight."""
    import time

    from app.core.listener import ACTIVE_POLL_S, IDLE_PAUSE_S

    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    taken: list[int] = []
    looks: list[int] = []

    class Recording(Listener):
        def handle(self, item: ListenerJob) -> None:
            if isinstance(item, MicBlock):
                taken.append(item.samples.size)
            super().handle(item)

        def poll(self) -> None:
            before = len(taken)
            super().poll()
            if len(taken) > before:
                looks.append(len(taken) - before)

    listener = Recording(events.append, FakeVoiceActivity(), Endpointer(CFG), playback)
    assert listener.poll_s() == IDLE_PAUSE_S
    listener.start()
    try:
        for index in range(9):
            assert listener.mic.write(quiet(0.032), index * 0.032)
            time.sleep(0.032)
        time.sleep(2 * IDLE_PAUSE_S)
    finally:
        listener.stop()
    assert taken == [512] * 9  # every block, in order, once, on its own capture time
    assert 2 <= len(looks) <= 6  # a few looks, not one per block
    playback.begin(1, held=False)  # a reply in flight: look often
    assert listener.poll_s() == ACTIVE_POLL_S


def test_a_reply_beginning_wakes_a_resting_listener() -> None:
    """A voice over the very start of a reply (a greeting, a typed question's answer) is
    not left in the ring for the rest of an idle pause: the reply's start wakes it."""
    import threading

    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    looked = threading.Event()

    class Resting(Listener):
        def poll_s(self) -> float:
            return 3600.0  # without a wake it would not look again this hour

        def poll(self) -> None:
            super().poll()
            if not self.playback.idle():
                looked.set()

    listener = Resting(events.append, FakeVoiceActivity(), Endpointer(CFG), playback)
    playback.on_begin = listener.wake  # as the pipeline wires them (runtime/wiring.py)
    listener.start()
    try:
        playback.begin(1, held=False)
        assert looked.wait(5.0)
    finally:
        listener.stop()


def test_blocks_gathering_in_an_idle_pause_do_not_make_the_listener_busy() -> None:
    """The memory pass waits for an idle pipeline; queued silent blocks must not hide it."""
    events: list[PipelineEvent] = []
    playback = PlaybackQueue(16_000, events.append)
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback)
    listener.handle(MicBlock(quiet(0.5)))
    listener.inbox.put(MicBlock(quiet(0.032)))
    assert not listener.busy()
    listener.handle(MicBlock(loud(0.2)))  # the user speaks: queued blocks are work again
    assert listener.busy()


def test_unmuting_takes_the_blocks_captured_after_it_unmuted_and_those_before_muted() -> None:
    """The microphone's blocks may wait in the ring when the unmute arrives: what was
    captured after the click is heard, what was captured before it is not."""
    from app.core.events import SpeechStarted
    from app.core.listener_jobs import SetListening

    for unmuted_at, heard in ((0.5, True), (5.0, False)):
        events: list[PipelineEvent] = []
        listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG),
                            PlaybackQueue(16_000, events.append))
        listener.handle(SetListening(True, 0.0))
        speech = loud(1.0)
        for index in range(0, speech.size, 512):
            listener.mic.write(speech[index:index + 512], 1.0 + (index + 512) / 16_000)
        assert listener.before_poll(SetListening(False, unmuted_at))
        listener.handle(SetListening(False, unmuted_at))
        assert any(isinstance(e, SpeechStarted) for e in events) is heard


def test_a_voice_read_in_goes_to_the_tap_not_to_a_turn() -> None:
    from app.core.events import SpeechStarted
    from app.core.input_tap import InputTap
    from app.core.listener_jobs import SetTap

    tap = InputTap()
    events = listen([SetTap(tap), MicBlock(loud(1.0)), MicBlock(quiet(1.0)), SetTap(None),
                     MicBlock(loud(1.0)), MicBlock(quiet(1.0))])
    assert tap.take().size == 32_000 and tap.take().size == 0
    assert [e.at for e in events if isinstance(e, SpeechStarted)] and len(end_times(events)) == 1
    assert min(e.at for e in events if isinstance(e, SpeechStarted)) > 2.0  # after the tap


class _ScoreRecorder(FakeTurnDetector):
    """The fake audio model, noting the length of every utterance it scored."""

    def __init__(self, *probabilities: float) -> None:
        super().__init__(probabilities[0])
        self.probabilities = list(probabilities)
        self.sizes: list[int] = []

    def complete_probability(self, audio: FloatAudio) -> float:
        self.sizes.append(int(audio.size))
        super().complete_probability(audio)
        return self.probabilities[min(len(self.sizes), len(self.probabilities)) - 1]


def _working_ahead(blocks: list[MicBlock], detector: FakeTurnDetector
                   ) -> tuple[list[PipelineEvent], list[FloatAudio]]:
    events: list[PipelineEvent] = []
    ahead: list[FloatAudio] = []
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG),
                        PlaybackQueue(16_000, events.append), turn_detector=detector,
                        defer_to_transcript=True, transcribe_ahead=ahead.append)
    for block in blocks:
        listener.handle(block)
    return events, ahead


def test_the_first_quiet_frame_sends_the_words_ahead_and_the_pause_uses_its_score() -> None:
    from app.core.events import EndOfTurnScore, SpeechPaused

    detector = _ScoreRecorder(0.8)
    events, ahead = _working_ahead([MicBlock(loud(1.0)), MicBlock(quiet(0.3))], detector)
    [sent] = ahead
    [pause] = [e for e in events if isinstance(e, SpeechPaused)]
    assert pause.audio.size - sent.size == 2 * 512  # one quiet frame in, two before the pause
    assert np.array_equal(pause.audio[: sent.size], sent)
    assert detector.sizes == [sent.size]  # scored once, at the quiet frame, not again
    assert [e.probability for e in events if isinstance(e, EndOfTurnScore)] == [0.8]


def test_a_voice_that_goes_on_after_the_quiet_frame_is_scored_again_at_its_pause() -> None:
    from app.core.events import EndOfTurnScore, SpeechPaused

    detector = _ScoreRecorder(0.2, 0.7)
    blocks = [MicBlock(loud(1.0)), MicBlock(quiet(0.064)), MicBlock(loud(0.5)),
              MicBlock(quiet(0.3))]
    events, ahead = _working_ahead(blocks, detector)
    assert len(ahead) == 2  # the dip and the real end
    [pause] = [e for e in events if isinstance(e, SpeechPaused)]
    assert detector.sizes == [ahead[0].size, ahead[1].size]  # the dip's score is not used
    assert pause.audio.size - ahead[1].size == 2 * 512
    assert [e.probability for e in events if isinstance(e, EndOfTurnScore)] == [0.7]


def test_over_an_audible_reply_the_score_waits_for_the_pause() -> None:
    """Scoring holds the listener's thread; over a reply a voice onset must not wait on it."""
    from app.core.events import EndOfTurnScore, SpeechPaused

    events: list[PipelineEvent] = []
    ahead: list[FloatAudio] = []
    detector = _ScoreRecorder(0.8)
    playback = PlaybackQueue(16_000, events.append)
    playback.begin(1, held=False)
    playback.enqueue(1, np.full(16_000 * 5, 0.2, np.float32), "A long reply.")
    listener = Listener(events.append, FakeVoiceActivity(), Endpointer(CFG), playback,
                        turn_detector=detector, defer_to_transcript=True,
                        barge_in=BargeInPolicy(), transcribe_ahead=ahead.append)
    _play_and_hear(listener, playback, np.concatenate([loud(1.0), quiet(0.3)]))
    assert playback.speaking or playback.paused
    [sent] = ahead  # the words still go ahead
    [pause] = [e for e in events if isinstance(e, SpeechPaused)]
    assert detector.sizes == [pause.audio.size]  # scored at the pause, not at the quiet frame
    assert [e.probability for e in events if isinstance(e, EndOfTurnScore)] == [0.8]
    assert pause.audio.size - sent.size == 2 * 512
