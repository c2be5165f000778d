"""The barge-in rule, in one place: when the user's voice pauses the reply, when it is an
interruption, and when what they said over it was not meant for the companion.

Three callers ask it, each at its own moment:
- the listener, per 32 ms frame: is this frame the assistant's echo residue, is the voice
  near the assistant, and does it pause the reply now (``pauses_reply``);
- the turn machine, on the words: was this speech over the assistant a request, or echo,
  a hallucination or a backchannel (``not_the_user``);
- the turn machine's ``tick(now)``: has the voice gone on long enough over the paused
  reply to count as an interruption before its words are known (``confirm_at``), and was
  the interrupted reply heard at all (``reply_was_heard``).

Change a threshold here and every caller follows; the config is the one place to tune.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from app.core.events import FloatAudio
from app.core.utterance_text import is_backchannel, not_a_request


@dataclass(frozen=True)
class BargeInConfig:
    enabled: bool = True
    """The user may talk over the reply (off: it always plays to the end)."""
    pause_after_voiced_ms: float = 64.0
    """Confident voice this long over the reply pauses it (two VAD frames): the audible
    half of a barge-in, long before the words are known."""
    confirm_after_s: float = 1.2
    """Speech over a paused reply that lasts this long interrupts it, words or not."""
    echo_residue_ratio: float = 0.15
    """While the assistant is audible, a frame the echo canceller took more than ~16 dB out
    of (its output under this share of the microphone's level) is its echo's residue:
    echo-only frames keep 1-2 % of the level, a voice over it 30-150 %."""
    echo_tail_s: float = 0.5
    """After the speaker goes quiet its echo can still reach the microphone this long."""
    reopen_within_s: float = 0.3
    """A reply heard for less than this when the user went on was not heard as an answer."""
    pause_lead_s: float = 0.1
    """The listener pauses a reply within about this long of the user's voice onset."""
    acknowledge_within_s: float = 1.5
    """A backchannel ("yeah", "okay", "ha ha") begun this soon after a reply that asked
    nothing acknowledges it: it gets no answer of its own. After a question it is one."""
    recent_reply_words: int = 80
    """How many of the assistant's last spoken words the echo check compares against."""
    speech_threshold_ratio: float = 0.7
    """While the assistant speaks, a voice counts as speech at this share of the VAD
    threshold (0.35 at the default 0.5): echo cancellation turns the user's voice down by
    5-7 dB then (its residual echo stays below 0.1), so interrupting needs a lower bar..."""
    speech_min_ms: int = 224
    """...but a longer run of speech, so a cough or a short echo burst does not count."""


@dataclass(frozen=True)
class BargeInPolicy:
    """Pure decisions; the callers own the state (frames, held replies, playback)."""

    config: BargeInConfig = field(default_factory=BargeInConfig)

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    # ---- per frame (listener) -------------------------------------------------------

    def speech_bar(self, threshold: float, min_speech_ms: int) -> tuple[float, int]:
        """The endpointer's VAD threshold and minimum speech while the assistant speaks,
        from the ones it uses otherwise (the sensitivity setting moves the threshold)."""
        del min_speech_ms  # over a reply the barge-in rule's own minimum applies
        return round(threshold * self.config.speech_threshold_ratio, 3), self.config.speech_min_ms

    def near_assistant(self, audible: bool, quiet_for_s: float) -> bool:
        """Whether a voice now may be the assistant's echo: it is audible, or went quiet
        less than the echo's tail ago."""
        return audible or quiet_for_s < self.config.echo_tail_s

    def is_echo_residue(self, frame: FloatAudio, raw: FloatAudio | None, near: bool) -> bool:
        """The canceller removed most of this frame: what is left is the assistant's echo."""
        if raw is None or not near or raw.size != frame.size:
            return False
        raw_level = float(np.sqrt(np.mean(np.square(raw))))
        if raw_level < 1e-3:
            return False
        out_level = float(np.sqrt(np.mean(np.square(frame))))
        return out_level < self.config.echo_residue_ratio * raw_level

    def pauses_reply(self, *, reply_sounding: bool, muted: bool, voiced_ms: float,
                     reply_began_after_voice: bool) -> bool:
        """Pause the reply now: a new onset over it, or a reply that began while the user
        was already talking (it waits for them; the turn machine reopens or drops it)."""
        if not self.config.enabled or muted or not reply_sounding:
            return False
        return voiced_ms >= self.config.pause_after_voiced_ms or reply_began_after_voice

    def pauses_reply_again(self, *, reply_sounding: bool, muted: bool) -> bool:
        """A voice whose first words were not the user's goes on after its pause, over the
        reply that was let play on: pause it again (the turn machine holds it again)."""
        return self.config.enabled and not muted and reply_sounding

    # ---- on the words and on the clock (turn machine) -------------------------------

    def not_the_user(self, text: str, recent_reply_words: list[str],
                     reply_still_going: bool) -> bool:
        """Speech over the assistant that neither interrupts nor starts a turn."""
        return not_a_request(text, recent_reply_words, reply_still_going=reply_still_going)

    def acknowledges(self, text: str, since_reply_s: float | None, reply_asked: bool) -> bool:
        """Words begun ``since_reply_s`` after the last reply ended (None: no reply yet)
        that only acknowledge it ("Yeah.", "Oh, okay."): not a request. An answer to the
        reply's question ("Yes.") is one."""
        return (since_reply_s is not None and not reply_asked
                and 0.0 <= since_reply_s <= self.config.acknowledge_within_s
                and is_backchannel(text))

    def confirm_at(self, held_since: float) -> float:
        """When speech that paused the reply at ``held_since`` interrupts it, words or not."""
        return held_since + self.config.confirm_after_s

    def reply_was_heard(self, played_s: float) -> bool:
        """An interrupted reply played this long was heard as an answer (else the request
        stays unanswered and joins the user's next words)."""
        return played_s - self.config.pause_lead_s >= self.config.reopen_within_s
