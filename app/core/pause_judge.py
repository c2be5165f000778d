"""The audio model's part of the end of a turn, on the listener's thread.

The end-of-turn model (Smart Turn) scores the utterance at its first quiet frame, beside
the recognizer; the listener reports that score at the pause, and either ends the turn or
waits longer. Once the turn machine has the pause's words, it sends its call
(``EndOfTurnCall``) and this applies it, including the second look: when the words say
finished but the model heard the voice go on, the model looks again at the same audio
once ``EndpointConfig.look_again_ms`` of silence has passed (docs/latency.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.core.endpointing import Endpointer
from app.core.events import EndOfTurnScore, FloatAudio, SpeechPaused
from app.core.ports import TurnDetector
from app.core.transcript_ahead import only_quiet_since
from app.core.turn_commands import JudgeEndOfTurn
from app.core.utterance_text import EndOfTurnCall

log = logging.getLogger(__name__)


class PauseJudge:
    """Scores pauses with the audio model and applies the end-of-turn calls to the
    endpointer; ``end_now`` ends the turn (the listener publishes it)."""

    def __init__(self, endpointer: Endpointer, turn_detector: TurnDetector | None,
                 complete_threshold: float, defer_to_transcript: bool,
                 publish: Callable[[EndOfTurnScore], None], end_now: Callable[[], None]) -> None:
        self.endpointer, self.turn_detector = endpointer, turn_detector
        self.complete_threshold = complete_threshold
        self.defer_to_transcript = defer_to_transcript
        """The turn machine sends the end-of-turn call once the pause's words are known
        (speculative turns); the listener then only reports the audio model's score."""
        self._publish, self._end_now = publish, end_now
        self._score_ahead: tuple[int, float] | None = None
        """(samples, the audio model's score) of the utterance at its first quiet frame."""
        config = endpointer.config
        self._pause_samples = config.pause_ms * config.sample_rate // 1000
        self.second_looks = 0
        """Turns ended by the second look (a count for tests and the debug log)."""

    def speech_started(self) -> None:
        self._score_ahead = None

    def score_ahead(self, audio: FloatAudio) -> None:
        """The utterance's first quiet frame: score it here, beside the recognizer, not at
        the pause beside the LLM's first token, which it slowed (docs/latency.md)."""
        if self.turn_detector is not None:
            self._score_ahead = (audio.size, self.turn_detector.complete_probability(audio))

    def at_pause(self, pause: SpeechPaused) -> None:
        """At the first pause, end the turn now if the user sounds finished, else wait
        longer than usual: fast replies without cutting people off mid-thought. The score
        made at the utterance's first quiet frame serves when only quiet frames followed."""
        if self.turn_detector is None:
            return
        ahead, self._score_ahead = self._score_ahead, None
        if ahead is not None and only_quiet_since(ahead[0], pause.audio.size,
                                                  self._pause_samples):
            probability = ahead[1]
        else:
            probability = self.turn_detector.complete_probability(pause.audio)
        log.debug("end-of-turn probability %.2f", probability)
        self._publish(EndOfTurnScore(at=pause.at, probability=probability))
        if probability < self.complete_threshold:  # deferred: unless the words say it is done
            self.endpointer.wait_longer()
        elif not self.defer_to_transcript:  # the turn machine decides once the words are in
            self._end_now()

    def apply(self, call: JudgeEndOfTurn) -> None:
        """The turn machine's call on this pause, once its words are known."""
        if self.endpointer.pause_at != call.pause_at:
            return  # the user went on (or the silence already ended the turn)
        if call.call is EndOfTurnCall.END_NOW:
            self._end_now()
        elif call.call is EndOfTurnCall.USUAL_SILENCE:
            self.endpointer.wait_usual()
        elif call.call is EndOfTurnCall.LOOK_AGAIN and self.turn_detector is not None:
            if self.endpointer.look_again():  # its silence has already passed
                self.look_again()
        else:
            self.endpointer.wait_longer()

    def look_again(self) -> None:
        """The second look: the utterance with ``look_again_ms`` of silence after it. A
        finished sentence said in a falling voice is often scored unfinished at the pause
        and finished once the silence goes on; a voice held for the next words stays
        unfinished, and the longer wait stands."""
        if self.turn_detector is None:
            return
        probability = self.turn_detector.complete_probability(
            self.endpointer.utterance_so_far())
        log.debug("end-of-turn probability on a second look %.2f", probability)
        if probability >= self.complete_threshold:
            self.second_looks += 1
            self._end_now()
