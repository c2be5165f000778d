"""VAD probabilities in, speech start / pause / resume / end-of-turn decisions out.

The endpointer also emits ``SpeechPaused`` at the first short silence so the pipeline
can start recognising and answering *during* the end-of-turn hangover, and only
release the audio once ``UtteranceEnded`` confirms the user is done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import numpy as np

from app.core.barge_in import BargeInPolicy
from app.core.events import FloatAudio, SpeechPaused, SpeechResumed, SpeechStarted, UtteranceEnded

EndpointEvent = SpeechStarted | SpeechPaused | SpeechResumed | UtteranceEnded


@dataclass(frozen=True)
class EndpointConfig:
    sample_rate: int = 16_000
    threshold: float = 0.5
    """A frame at or above this probability is speech."""
    hysteresis: float = 0.15
    """Once speaking, a frame counts as silence only below ``threshold - hysteresis``."""
    min_speech_ms: int = 160
    """Speech must last this long before it counts (filters clicks and coughs)."""
    pause_ms: int = 96
    """Silence after speech that starts speculative work on the utterance so far."""
    end_of_turn_ms: int = 480
    """Silence after speech that ends the user's turn."""
    pre_roll_ms: int = 320
    """Audio kept from before the detected start, so the first syllable is not clipped."""
    max_gap_ms: int = 96
    """Unvoiced gap allowed inside the minimum-speech window before it resets."""
    unfinished_end_of_turn_ms: int = 900
    """Silence needed when the turn detector says the user sounds unfinished."""
    look_again_ms: int = 384
    """Silence after which the turn detector looks again at a turn whose words say finished
    and whose sound did not (``Endpointer.look_again``; docs/latency.md)."""
    max_utterance_s: float = 30.0
    early_transcript_ms: int = 32
    """Silence after speech at which the utterance so far is transcribed ahead of the pause
    (``Endpointer.went_quiet``; 0: never)."""


SpeechBar = Callable[[float, int], tuple[float, int]]
"""(threshold, minimum speech ms) -> the same while the assistant speaks."""


class _State(Enum):
    SILENCE = 0
    MAYBE_SPEECH = 1
    SPEECH = 2


class Endpointer:
    """Pure state machine over fixed-size frames; times are seconds of audio fed."""

    def __init__(self, config: EndpointConfig | None = None,
                 over_reply: SpeechBar | None = None) -> None:
        self.config = config or EndpointConfig()
        cfg = self.config
        self._bar_over_reply = (over_reply or BargeInPolicy().speech_bar)(
            cfg.threshold, cfg.min_speech_ms)
        """(threshold, minimum speech ms) while the assistant speaks: the barge-in rule's
        (``BargeInPolicy.speech_bar``)."""
        self.assistant_speaking = False
        self.went_quiet = False
        """The last frame fed was the utterance's first quiet one (``early_transcript_ms``
        of silence, before the pause): its words are all said unless the voice goes on."""
        self.look_due = False
        """The last frame fed brought this pause's silence to ``look_again_ms`` and a second
        look was asked for (``look_again``)."""
        self._frames: list[FloatAudio] = []
        self._samples_fed = 0
        self._pre_roll: list[FloatAudio] = []
        self._pre_roll_samples = 0
        self._reset_utterance()

    def _reset_utterance(self) -> None:
        self._state = _State.SILENCE
        self._frames = []
        self._voiced_ms = 0.0
        self._gap_ms = 0.0
        self._silence_ms = 0.0
        self._paused = False
        self._pause_at = 0.0
        self._speech_start = 0.0
        self._last_voiced_end = 0.0
        self._end_of_turn_ms = float(self.config.end_of_turn_ms)
        self._look_asked = False

    @property
    def in_speech(self) -> bool:
        return self._state is not _State.SILENCE

    @property
    def voiced_ms(self) -> float:
        """Voiced time of the speech being confirmed (0 in silence)."""
        return 0.0 if self._state is _State.SILENCE else self._voiced_ms

    @property
    def speech_start(self) -> float:
        return self._speech_start

    @property
    def pause_at(self) -> float | None:
        """Where the current pause was reported (``SpeechPaused.at``); None when not paused."""
        return self._pause_at if self._paused else None

    def end_now(self) -> UtteranceEnded | None:
        """End the turn at this pause (a turn detector is confident the user is done)."""
        if self._state is not _State.SPEECH or not self._paused:
            return None
        ended = UtteranceEnded(
            at=self._seconds(self._samples_fed),
            speech_start=self._speech_start,
            speech_end=self._last_voiced_end,
            audio=self._utterance_audio(),
        )
        self._reset_utterance()
        return ended

    def wait_longer(self) -> None:
        """The user sounds unfinished: give this pause more time before ending the turn."""
        self._end_of_turn_ms = max(self._end_of_turn_ms, self.config.unfinished_end_of_turn_ms)

    def look_again(self) -> bool:
        """Wait longer, and set ``look_due`` when the silence reaches ``look_again_ms``.
        True when it already has: the caller looks now."""
        self.wait_longer()
        self._look_asked = True
        return self._silence_ms >= self.config.look_again_ms

    def wait_usual(self) -> None:
        """Undo ``wait_longer`` for this pause: end it after the usual silence."""
        self._end_of_turn_ms = float(self.config.end_of_turn_ms)

    def reset(self) -> None:
        """Forget any speech in progress (used when the microphone is muted)."""
        self._reset_utterance()
        self._pre_roll = []
        self._pre_roll_samples = 0

    def _seconds(self, samples: int) -> float:
        return samples / self.config.sample_rate

    def _remember_pre_roll(self, frame: FloatAudio) -> None:
        limit = int(self.config.pre_roll_ms * self.config.sample_rate / 1000)
        self._pre_roll.append(frame)
        self._pre_roll_samples += frame.size
        while self._pre_roll and self._pre_roll_samples - self._pre_roll[0].size >= limit:
            self._pre_roll_samples -= self._pre_roll.pop(0).size

    def utterance_so_far(self) -> FloatAudio:
        """The audio of the utterance in progress, its pre-roll first (empty in silence)."""
        return self._utterance_audio()

    def _utterance_audio(self) -> FloatAudio:
        if not self._frames:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(self._frames).astype(np.float32, copy=False)

    def feed(self, frame: FloatAudio, probability: float) -> list[EndpointEvent]:
        """Advance by one frame; return the decisions it triggered."""
        cfg = self.config
        frame_start = self._seconds(self._samples_fed)
        self._samples_fed += frame.size
        now = self._seconds(self._samples_fed)
        frame_ms = 1000.0 * frame.size / cfg.sample_rate
        threshold, min_speech_ms = (self._bar_over_reply if self.assistant_speaking
                                    else (cfg.threshold, cfg.min_speech_ms))
        events: list[EndpointEvent] = []
        self.went_quiet = self.look_due = False

        if self._state is _State.SILENCE:
            if probability >= threshold:
                self._state = _State.MAYBE_SPEECH
                self._frames = list(self._pre_roll)
                self._speech_start = frame_start
                self._voiced_ms = frame_ms
                self._gap_ms = 0.0
                self._last_voiced_end = now
            self._remember_pre_roll(frame)
            if self._state is _State.MAYBE_SPEECH:
                self._frames.append(frame)
                if self._voiced_ms >= min_speech_ms:
                    self._state = _State.SPEECH
                    events.append(SpeechStarted(at=now, speech_start=self._speech_start))
            return events

        self._frames.append(frame)
        self._remember_pre_roll(frame)
        if self._state is _State.MAYBE_SPEECH:
            if probability >= threshold - cfg.hysteresis:
                self._voiced_ms += frame_ms
                self._gap_ms = 0.0
                self._last_voiced_end = now
            else:
                self._gap_ms += frame_ms
                if self._gap_ms > cfg.max_gap_ms:
                    self._reset_utterance()
                    return events
            if self._voiced_ms >= min_speech_ms:
                self._state = _State.SPEECH
                events.append(SpeechStarted(at=now, speech_start=self._speech_start))
            return events

        # SPEECH
        if probability >= threshold - cfg.hysteresis:
            self._last_voiced_end = now
            self._silence_ms = 0.0
            if self._paused:
                self._paused = self._look_asked = False
                events.append(SpeechResumed(at=now))
        else:
            self._silence_ms += frame_ms
            early = cfg.early_transcript_ms
            self.went_quiet = (not self._paused and 0 < early < cfg.pause_ms
                               and self._silence_ms - frame_ms < early <= self._silence_ms)
            look = cfg.look_again_ms
            self.look_due = (self._look_asked
                             and self._silence_ms - frame_ms < look <= self._silence_ms)
        too_long = now - self._speech_start >= cfg.max_utterance_s
        if not self._paused and self._silence_ms >= cfg.pause_ms and not too_long:
            self._paused = True
            self._pause_at = now
            events.append(
                SpeechPaused(
                    at=now,
                    speech_start=self._speech_start,
                    speech_end=self._last_voiced_end,
                    audio=self._utterance_audio(),
                )
            )
        if self._silence_ms >= self._end_of_turn_ms or too_long:
            events.append(
                UtteranceEnded(
                    at=now,
                    speech_start=self._speech_start,
                    speech_end=self._last_voiced_end,
                    audio=self._utterance_audio(),
                )
            )
            self._reset_utterance()
        return events
