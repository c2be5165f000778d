"""Where the conversation is: the turn machine's phases, what the window may show in each,
and the one turn in flight.

Phases (``TurnMachine.phase``; the first that applies, from the fields below):

| phase             | what is going on                                  | shown state         |
|-------------------|---------------------------------------------------|---------------------|
| HELD_FOR_BARGE_IN | a reply is paused under the user's voice          | LISTENING           |
| ANSWERING         | a confirmed turn is being answered (muted or not) | THINKING / SPEAKING |
| SPECULATING       | a turn started at a pause, its reply held back    | LISTENING           |
| MUTED             | the microphone is off, nothing is being answered  | MUTED               |
| USER_SPEAKING     | the user is talking, no turn yet                  | LISTENING           |
| IDLE              | nobody is talking, nothing is being answered      | IDLE                |

(ERROR is shown after a stage failed, in whichever phase, until the next change.)

Transitions:

| from               | on                                            | to                 |
|--------------------|-----------------------------------------------|--------------------|
| IDLE               | SpeechStarted                                 | USER_SPEAKING      |
| USER_SPEAKING      | SpeechPaused (speculative on)                 | SPECULATING        |
| USER_SPEAKING      | UtteranceEnded                                | ANSWERING          |
| SPECULATING        | SpeechResumed (cancel, nothing kept)          | USER_SPEAKING      |
| SPECULATING        | UtteranceEnded (release the held reply)       | ANSWERING          |
| SPECULATING        | Transcript with no words / not the user       | USER_SPEAKING/IDLE |
| ANSWERING          | SpeechStarted before the reply was heard      | USER_SPEAKING      |
|                    | (reopened: its words join the next turn)      |                    |
| ANSWERING          | SpeechStarted over the reply, barge-in on     | HELD_FOR_BARGE_IN  |
| ANSWERING          | PlaybackEnded (commit what was heard)         | IDLE               |
| HELD_FOR_BARGE_IN  | Transcript: a request, or ``tick`` past        | the new turn's     |
|                    | ``BargeInPolicy.confirm_at`` (drop the reply)  | phase              |
| HELD_FOR_BARGE_IN  | Transcript: echo, noise, a backchannel        | ANSWERING (resume) |
| ANSWERING          | SpeechResumed over the reply (that voice's    | HELD_FOR_BARGE_IN  |
|                    | first words were not the user's): words only  |                    |
| any                | set_muted(True): an unconfirmed turn is        | MUTED, or          |
|                    | cancelled, a held reply plays on               | ANSWERING          |
| MUTED              | set_muted(False)                              | IDLE               |
| any                | StageFailed (cancel the live turn)            | IDLE               |

Speculative turns: at the first pause in the user's speech a turn starts with its audio
*held*; if the pause becomes an end of turn the held reply is released (it is often
already synthesized), and if the user speaks on, the turn is cancelled and discarded.

Reopened turns: when the turn ended at a short pause but the user goes on before any of
the reply was heard (or hardly any: ``BargeInPolicy.reply_was_heard``), the user was not
done. The turn is dropped without a trace in the history, and its audio is carried into
the next turn, so "tell me a story about a dragon | who learns to bake" is heard as one
request, never as the fragment after the pause.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from app.core.events import AssistantState
from app.core.held_audio import HeldAudio


class Phase(Enum):
    IDLE = "idle"
    USER_SPEAKING = "user speaking"
    SPECULATING = "speculating"
    ANSWERING = "answering"
    HELD_FOR_BARGE_IN = "held for barge-in"
    MUTED = "muted"


SHOWN_IN_PHASE: dict[Phase, frozenset[AssistantState]] = {
    Phase.IDLE: frozenset({AssistantState.IDLE}),
    Phase.USER_SPEAKING: frozenset({AssistantState.LISTENING}),
    Phase.SPECULATING: frozenset({AssistantState.LISTENING}),
    Phase.ANSWERING: frozenset({AssistantState.THINKING, AssistantState.SPEAKING}),
    Phase.HELD_FOR_BARGE_IN: frozenset({AssistantState.LISTENING}),
    Phase.MUTED: frozenset({AssistantState.MUTED}),
}
"""The states the window may show in each phase (and ERROR after a failure)."""


def shown_state(active: TurnInFlight | None, muted: bool, user_speaking: bool) -> AssistantState:
    """What the window shows: an answer in flight (muted or not), else muted, else whether
    the user is talking."""
    if active is not None:
        if not active.confirmed:
            return AssistantState.LISTENING
        speaking = active.playback_started_at is not None
        return AssistantState.SPEAKING if speaking else AssistantState.THINKING
    if muted:
        return AssistantState.MUTED
    return AssistantState.LISTENING if user_speaking else AssistantState.IDLE


@dataclass
class TurnInFlight:
    turn_id: int
    confirmed: bool
    audio: HeldAudio
    text: str | None = None
    """The transcript; ``user_text`` is it as sent (joined to an unanswered request)."""
    user_text: str | None = None
    abandoned: bool = False
    playback_started_at: float | None = None
    """When its reply became audible (``PlaybackStarted.at``, the one clock); None: not yet."""
    over_assistant: bool = False
    """Its speech began while the assistant was audible: its words must prove themselves."""
    speech_start: float | None = None
    """When its utterance began (the listener's clock): a backchannel just after a reply
    acknowledges that reply (``BargeInPolicy.acknowledges``)."""
    speech_end: float | None = None
    """Where its own speech ended: with ``speech_start``, what a reopened turn's words keep
    (``HeldAudio.spoken``)."""
    pause_at: float | None = None
    """``SpeechPaused.at`` of a speculative turn: which pause the end-of-turn call is for."""
    score_pending: bool = False
    """The audio model's score for the pause is still to come: the words wait for it."""
    end_probability: float | None = None
    """The audio model's end-of-turn probability at the pause that started this turn."""
    typed: str | None = None
    """Words typed in the window (no audio): reopened, they go in front of the next
    transcript instead."""
    other_voice: bool = False
    """Its words were another voice's (dropped, ``voice_gate``)."""
    carried: HeldAudio | None = None
    """A reopened turn's words joined in front of this utterance (asked again alone if this
    utterance turns out to be another voice's)."""

    def reply_audible_at(self, speech_start: float) -> bool:
        """Whether its reply was audible when speech starting then *began*. Speech confirmed
        160 ms after it began may be confirmed just after a fast reply started: it still
        went on from the user's own pause (it cannot be that reply's echo), so the turn
        reopens rather than being taken for a barge-in that leaves the first words
        unanswered."""
        started = self.playback_started_at
        return started is not None and speech_start >= started
