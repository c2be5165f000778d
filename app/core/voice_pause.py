"""The listener's half of a barge-in: pause the reply at the user's voice, frame by frame.

The reply pauses at a new voice's first confident frames; if the voice dies away before it
counts as speech (a cough), the reply plays on after a dip. Once it counts as speech over
the reply, the turn machine holds the reply and the words decide. When the words of a
voice's first part were not the user's (its own echo, "mm-hm", nothing Whisper could
hear) the machine lets the reply play on; should that voice go on after its pause, the
reply pauses again and the machine holds it again (``SpeechResumed.over_assistant``), so
"Stop. What time is it?" with "Stop." heard as nothing is not talked over and lost.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.barge_in import BargeInPolicy
from app.core.endpointing import Endpointer
from app.core.events import PipelineEvent, PlaybackPaused, PlaybackResumed, SpeechResumed
from app.core.playback import PlaybackQueue


class VoicePause:
    """Pauses and resumes the reply for the voice the endpointer is tracking."""

    def __init__(self, playback: PlaybackQueue, endpointer: Endpointer,
                 publish: Callable[[PipelineEvent], None],
                 clock_time: Callable[[float], float]) -> None:
        self.playback, self.endpointer = playback, endpointer
        self.publish, self.clock_time = publish, clock_time
        self.paused = False
        """The reply is (or was, until the turn machine let it play on) paused for the
        voice in progress."""
        self._confirmed = self._confirmed_over_reply = False
        """The voice in progress counted as speech, and did so while the reply was
        audible (the turn machine then holds the reply; otherwise the reply began while
        the user was talking)."""

    def speech_confirmed(self, over_reply: bool) -> None:
        self._confirmed, self._confirmed_over_reply = True, over_reply

    def resumed(self, event: SpeechResumed, policy: BargeInPolicy, muted: bool,
                frame_s: float) -> SpeechResumed:
        """The voice went on after a pause. If the reply it paused is sounding again (its
        first words were not the user's), pause it again: the returned event tells the
        turn machine to hold it."""
        if not (self.paused and self._confirmed_over_reply) or not policy.pauses_reply_again(
                reply_sounding=self.playback.speaking, muted=muted):
            return event
        self.playback.pause()
        now = self.clock_time(event.at)
        self.publish(PlaybackPaused(at=now, speech_start=now - frame_s))
        return SpeechResumed(event.at, over_assistant=True)

    def update(self, policy: BargeInPolicy, muted: bool, now: float) -> None:
        """After each frame: pause the reply at a new voice onset; resume it if the voice
        dies away before it counts as speech (a cough costs a dip). Once it counts over
        the reply, the turn machine decides whether it plays on."""
        machine_decides = self._confirmed and self._confirmed_over_reply
        if self.paused:
            if not self.endpointer.in_speech:
                if not machine_decides:
                    self.playback.resume()
                    self.publish(PlaybackResumed(at=now))
                self.paused = False
                self._confirmed = self._confirmed_over_reply = False
            return
        if not self.endpointer.in_speech:
            self._confirmed = self._confirmed_over_reply = False
            return
        if not machine_decides and policy.pauses_reply(
                reply_sounding=self.playback.speaking, muted=muted,
                voiced_ms=self.endpointer.voiced_ms,
                reply_began_after_voice=self._reply_began_after_voice()):
            self.playback.pause()
            self.paused = True
            if not self._confirmed:
                self.publish(PlaybackPaused(
                    at=now, speech_start=self.clock_time(self.endpointer.speech_start)))

    def _reply_began_after_voice(self) -> bool:
        """The reply started sounding after this voice began (it slipped past the hold on
        new replies between two frames): the voice is not its echo, and the turn machine
        reopens the turn for it (``TurnInFlight.reply_audible_at``), so pause it now."""
        started = self.playback.sounding_since
        return started is not None and self.clock_time(self.endpointer.speech_start) < started
