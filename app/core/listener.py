"""The listener stage: echo cancellation, VAD framing and endpointing, in arrival order.

The capture callback only copies into ``mic`` (an ``InputRing``), read here at every
wake-up; the speaker's copies of what it played (the echo canceller's reference, stamped
with when they play) go into ``played``, read before each capture block, and the canceller
gets them by time (``echo_alignment``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.core.background_voice import BackgroundVoice
from app.core.barge_in import BargeInConfig, BargeInPolicy
from app.core.echo_alignment import TimedEchoCanceller
from app.core.endpointing import Endpointer
from app.core.events import (
    FloatAudio,
    PipelineEvent,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
)
from app.core.input_guard import NonFiniteGuard
from app.core.input_ring import InputRing
from app.core.input_tap import InputTap
from app.core.level_meter import LevelThrottle
from app.core.listener_jobs import ListenerJob, MicBlock, SetListening, SetTap
from app.core.pause_judge import PauseJudge
from app.core.playback import PlaybackQueue
from app.core.ports import (
    PIPELINE_SAMPLE_RATE,
    DelaysOutput,
    EchoCanceller,
    TurnDetector,
    VoiceActivity,
)
from app.core.stream_clock import StreamClock, StreamTime
from app.core.telemetry import InputLevel, level_db
from app.core.turn_commands import JudgeEndOfTurn
from app.core.utterance_text import END_OF_TURN_COMPLETE
from app.core.voice_pause import VoicePause
from app.core.worker import Publish, Worker

IDLE_PAUSE_S = 0.192  # six 32 ms blocks per wake-up while idle: only a voice's start waits
ACTIVE_POLL_S = 0.010  # the ring is read this often with a turn in flight (no one wakes it)
MIC_RING_BLOCKS = 512  # capture blocks (about 16 s) the microphone may run ahead of it
NO_BARGE_IN = BargeInPolicy(BargeInConfig(enabled=False))
DIGITAL_SILENCE = 1e-3  # peak below -60 dBFS: no voice can be in the frame


class Listener(Worker[ListenerJob]):
    name = "listener"

    def __init__(
        self,
        publish: Publish,
        vad: VoiceActivity,
        endpointer: Endpointer,
        playback: PlaybackQueue,
        echo: EchoCanceller | None = None,
        turn_detector: TurnDetector | None = None,
        complete_threshold: float = END_OF_TURN_COMPLETE,
        level_interval_s: float = 0.05,
        defer_to_transcript: bool = False,
        barge_in: BargeInPolicy = NO_BARGE_IN,
        mic_ring_blocks: int = MIC_RING_BLOCKS,
        transcribe_ahead: Callable[[FloatAudio], None] | None = None,
        background: BackgroundVoice | None = None,
    ) -> None:
        super().__init__(publish)
        self.mic = InputRing(mic_ring_blocks * 1024, mic_ring_blocks)
        """What the capture callback writes to (``InputRing.write``); read by ``poll``."""
        self.vad, self.endpointer, self.playback, self.echo = vad, endpointer, playback, echo
        self.echo_in = None if echo is None else TimedEchoCanceller(echo, playback.sample_rate)
        """The canceller fed by time; its ``played`` ring takes the speaker's copies."""
        self.turn_detector = turn_detector
        self.pauses = PauseJudge(endpointer, turn_detector, complete_threshold,
                                 defer_to_transcript, self.publish, self._end_now)
        """The audio model's scores and the end-of-turn calls (``pause_judge``)."""
        self.barge_in = barge_in
        """When the user's voice pauses the reply, and what counts as the assistant's echo."""
        self.transcribe_ahead = transcribe_ahead
        """Given the utterance at its first quiet frame (``transcript_ahead``)."""
        self.background = background or BackgroundVoice()  # a TV under the user's voice
        self._voiced = endpointer.config.threshold - endpointer.config.hysteresis
        self.voice_pause = VoicePause(playback, endpointer, publish, self.clock_time)
        """Pauses the reply at the user's voice (the listener's half of a barge-in)."""
        self._since_audible = 1 << 30
        self.muted = False
        self.tap: InputTap | None = None  # takes the audio while a voice is read in (deaf)
        self._pending = np.zeros(0, dtype=np.float32)
        delay = echo.output_delay_samples if isinstance(echo, DelaysOutput) else 0
        self._raw_pending = np.zeros(delay, dtype=np.float32)
        """The unprocessed capture, delayed like the canceller's output, frame for frame."""
        self.echo_residue_frames = 0
        self._samples = 0
        self.clock = StreamClock(output_delay_s=delay / PIPELINE_SAMPLE_RATE)
        """Where the microphone's samples land on the one clock every event is stamped with."""
        self._level_every = int(level_interval_s * endpointer.config.sample_rate)
        self._since_level = 0
        self._levels = LevelThrottle(endpointer.config.sample_rate)
        self._guard = NonFiniteGuard(endpointer.config.sample_rate)

    def idle_pause_s(self) -> float:
        """Nobody speaking and nothing playing: take the microphone's blocks a few at a time
        (a wake-up costs a thread switch); never with a turn in flight."""
        rate = self.endpointer.config.sample_rate
        audible = self.playback.speaking or self.playback.paused
        if (self.endpointer.in_speech
                or self.barge_in.near_assistant(audible, self._since_audible / rate)
                or self.voice_pause.paused
                or not self.playback.idle()):  # a turn in flight: the user may go on
            return 0.0
        return IDLE_PAUSE_S

    def busy(self) -> bool:
        """Blocks gathering in an idle pause are no work anyone waits for (else the
        pipeline never looked idle and the memory pass never ran)."""
        waiting = super().busy() or not self.mic.empty()
        return waiting and self.idle_pause_s() == 0.0

    def before_poll(self, item: ListenerJob) -> bool:
        """Mute and unmute first: blocks captured after them are taken the new way."""
        return isinstance(item, SetListening)

    def poll_s(self) -> float:
        return self.idle_pause_s() or ACTIVE_POLL_S

    def poll(self) -> None:
        """Every block the microphone captured since the last look, each on its own time."""
        in_speech = self.endpointer.in_speech
        for samples, captured_at in self.mic.take_blocks():
            self.handle(MicBlock(samples, captured_at))
        if in_speech and not self.endpointer.in_speech:
            self.on_settled()  # a voice ended (a click ends with no event)

    def handle(self, item: ListenerJob) -> None:
        match item:
            case MicBlock():
                self._map_clock(item)
                self._captured(item.samples)
            case SetListening():
                taken = [MicBlock(samples, captured_at)
                         for samples, captured_at in self.mic.take_blocks()]
                for block in taken:  # captured before the change: as they were
                    if item.at is None or (block.captured_at or 0.0) <= item.at:
                        self.handle(block)
                self.muted = item.muted
                self.endpointer.reset()
                self.vad.reset()
                self._hold_replies_for_voice()
                for block in taken:
                    if item.at is not None and (block.captured_at or 0.0) > item.at:
                        self.handle(block)
            case SetTap():  # a voice in progress ends as the frames turn deaf
                self.tap = item.tap
            case JudgeEndOfTurn():
                self.pauses.apply(item)

    def _captured(self, samples: FloatAudio) -> None:
        recorded_from = self.clock.recorded_at(self._guard.received / PIPELINE_SAMPLE_RATE)
        samples = self._guard.clean(samples)
        if self.echo_in is not None:
            self._raw_pending = np.concatenate([self._raw_pending, samples])
            samples = self.echo_in.process(samples, recorded_from)
        if self.tap is not None:
            self.tap.put(samples)  # and counted below as heard by nobody, like muted
        self._pending = np.concatenate([self._pending, samples.astype(np.float32, copy=False)])
        size = self.vad.frame_size
        while self._pending.size >= size:
            frame, self._pending = self._pending[:size], self._pending[size:]
            raw: FloatAudio | None = None
            if self.echo is not None:
                raw, self._raw_pending = self._raw_pending[:size], self._raw_pending[size:]
            self._frame(frame, raw)

    @property
    def nonfinite_samples(self) -> int:
        """Non-finite input samples replaced with silence so far."""
        return self._guard.nonfinite_samples

    def stop(self, timeout: float = 5.0) -> None:
        super().stop(timeout)
        self._guard.flush()  # a stretch still open when the input ended

    def _map_clock(self, block: MicBlock) -> None:
        if block.captured_at is not None:
            end = (self._guard.received + block.samples.size) / PIPELINE_SAMPLE_RATE
            self.clock.observe(block.captured_at, StreamTime(end))

    def clock_time(self, stream_s: float) -> float:
        """A time the endpointer counted (the input stream), on the pipeline clock."""
        return self.clock.to_pipeline(StreamTime(stream_s))

    def _stamp(self, event: PipelineEvent) -> PipelineEvent:
        return self.clock.stamp(event, score_follows=self.turn_detector is not None)

    def _publish_level(self, frame: FloatAudio, rate: int) -> None:
        level = 0.0 if self.muted else float(np.sqrt(np.mean(np.square(frame))))
        if self._levels.wants(level_db(level), self._samples):
            self.publish(InputLevel(level=level, at=self.clock_time(self._samples / rate)))

    def _frame(self, frame: FloatAudio, raw: FloatAudio | None = None) -> None:
        self._samples += frame.size
        self._since_level += frame.size
        rate = self.endpointer.config.sample_rate
        now = self.clock_time(self._samples / rate)
        if self._since_level >= self._level_every:
            self._since_level = 0
            self._publish_level(frame, rate)
        # No VAD (most of an idle listener's CPU) on digital silence: under -60 dBFS, no voice.
        deaf = self.muted or self.tap is not None or np.max(np.abs(frame)) < DIGITAL_SILENCE
        probability = 0.0 if deaf else self.vad.probability(frame)
        audible = self.playback.speaking or self.playback.paused
        self._since_audible = 0 if self.playback.speaking else self._since_audible + frame.size
        near = self.barge_in.near_assistant(audible, self._since_audible / rate)
        if probability > 0.0 and self.barge_in.is_echo_residue(frame, raw, near):
            self.echo_residue_frames += 1
            probability = 0.0
        elif self.background.masks(frame, probability >= self._voiced, now):
            probability = 0.0  # a quieter voice, not the user's, going on (background_voice)
        self.endpointer.assistant_speaking = audible
        found_events = self.endpointer.feed(frame, probability)
        self._hold_replies_for_voice()
        if (self.endpointer.went_quiet and self.transcribe_ahead is not None
                and not self.muted and self.tap is None):
            self._work_ahead(self.endpointer.utterance_so_far(), score=not audible)
        if self.endpointer.look_due and not self.playback.speaking:
            self.pauses.look_again()
        for found in found_events:
            if isinstance(found, SpeechStarted):
                self.pauses.speech_started()
                self.voice_pause.speech_confirmed(over_reply=audible)
                found = SpeechStarted(found.at, found.speech_start, over_assistant=near)
            elif isinstance(found, SpeechResumed):
                found = self.voice_pause.resumed(found, self.barge_in, self.muted,
                                                 frame.size / rate)
            event = self._stamp(found)
            self.publish(event)
            if isinstance(event, SpeechPaused):
                self.pauses.at_pause(event)
        self.voice_pause.update(self.barge_in, self.muted, now)

    def _hold_replies_for_voice(self) -> None:
        """No reply starts while a voice is in progress (from its first voiced frame, not
        once it counts as speech), set before any end of turn is published."""
        self.playback.hold_new_replies(self.endpointer.in_speech and not self.muted)

    def _end_now(self) -> None:
        ended = self.endpointer.end_now()
        self._hold_replies_for_voice()  # before the turn's end lets its reply play
        if ended is not None:
            self.publish(self._stamp(ended))

    def _work_ahead(self, audio: FloatAudio, score: bool) -> None:
        """The utterance's first quiet frame: its words go to the recognizer and the audio
        model scores it. Not while a reply is audible: scoring holds this thread, and a
        voice starting over the reply then would pause it that much later (it is scored
        at the pause instead)."""
        assert self.transcribe_ahead is not None
        self.transcribe_ahead(audio)
        if score:
            self.pauses.score_ahead(audio)
