"""The turn state machine: who is talking, which turn is live, what to do next.

Pure: events in, commands out. The controller executes the commands (start recognition,
release or flush playback...) and feeds back what the stages report, and calls ``tick(now)``
for the one deadline the machine keeps. It owns no threads or clocks, so it is tested by
calling it.

Phases and the states each shows: ``turn_phase``.

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
| any                | set_muted(True): an unconfirmed turn is        | MUTED, or          |
|                    | cancelled, a held reply plays on               | ANSWERING          |
| MUTED              | set_muted(False)                              | IDLE               |
| any                | StageFailed (cancel the live turn)            | IDLE               |

Speculative and reopened turns: ``turn_phase``. What counts as a barge-in is
``app.core.barge_in``'s alone; the barge-in state (a held reply) is ``reply_hold``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.barge_in import BargeInPolicy
from app.core.conversation import Conversation
from app.core.events import (
    AssistantState,
    EndOfTurnDecided,
    EndOfTurnScore,
    PipelineEvent,
    PlaybackEnded,
    PlaybackResumed,
    PlaybackStarted,
    SpeechAudio,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
    StageFailed,
    StateChanged,
    Transcript,
    TurnCancelled,
    TurnConfirmed,
    TurnStarted,
    UtteranceEnded,
)
from app.core.held_audio import HeldAudio, join_utterances, stream_end
from app.core.reply_hold import ReplyHold
from app.core.turn_commands import (
    NOT_THE_USER,
    REOPENED,
    CancelTurn,
    Command,
    JudgeEndOfTurn,
    Publish,
    ReleaseTurn,
    Respond,
    ResumePlayback,
    StartTurn,
)
from app.core.turn_history import TurnHistory
from app.core.turn_phase import Phase, TurnInFlight
from app.core.utterance_text import EndOfTurnCall, end_of_turn_call, judge_text


@dataclass
class TurnMachine:
    history: TurnHistory
    """Where each turn's prompt comes from and what was heard of it goes."""
    speculative: bool = True
    barge_in: BargeInPolicy = field(default_factory=BargeInPolicy)
    sample_rate: int = 16_000
    carry_for_s: float = 10.0
    """Carried words join the next utterance only if it starts within this long."""
    complete_threshold: float = 0.5
    """The audio model's probability above which an unclear transcript ends the turn."""
    words_end_turns: bool = True
    """Send the listener an end-of-turn call from the speculative transcript's words."""
    state: AssistantState = AssistantState.IDLE
    muted: bool = False
    _active: TurnInFlight | None = None
    _next_id: int = 1
    _user_speaking: bool = False
    _carry: HeldAudio | None = None
    _speech_over_assistant: bool = False
    _hold: ReplyHold = field(init=False)

    def __post_init__(self) -> None:
        self._hold = ReplyHold(self.barge_in)

    @property
    def phase(self) -> Phase:
        """What is going on, read from the fields (the table in the module docstring)."""
        if self._hold.held is not None:
            return Phase.HELD_FOR_BARGE_IN
        if self._active is not None:  # muting cancels an unconfirmed turn, not an answer
            return Phase.ANSWERING if self._active.confirmed else Phase.SPECULATING
        if self.muted:
            return Phase.MUTED
        return Phase.USER_SPEAKING if self._user_speaking else Phase.IDLE

    @property
    def live_turn_id(self) -> int | None:
        return self._active.turn_id if self._active else None

    @property
    def conversation(self) -> Conversation:
        """The conversation new turns are answered from."""
        return self.history.conversation

    def cancel_live(self, at: float, reason: str) -> list[Command]:
        return self._cancel(at, reason)

    def set_muted(self, muted: bool, at: float) -> list[Command]:
        self.muted = muted
        commands: list[Command] = []
        if muted:
            self._user_speaking = False
            self._carry = None
            if self._active and not self._active.confirmed:
                commands += self._cancel(at, "muted")
            commands += self._resume_held(at)  # the user stopped listening to themselves
        return [*commands, *self._settle(at)]

    def handle(self, event: PipelineEvent) -> list[Command]:
        """React to one pipeline event; events of stale turns are ignored."""
        return self._handle(event)

    def next_deadline(self) -> float | None:
        """When ``tick`` has something to do next (None: nothing is waiting)."""
        return self._hold.deadline()

    def tick(self, now: float) -> list[Command]:
        """The machine's one deadline: speech that goes on over a paused reply is a
        barge-in once it has lasted long enough, before its words are known."""
        deadline = self.next_deadline()
        if deadline is None or now < deadline:
            return []
        return self._hold.confirm(now)

    def _handle(self, event: PipelineEvent) -> list[Command]:
        match event:
            case SpeechStarted():
                return self._on_speech_started(event)
            case SpeechPaused():
                return self._on_pause(event)
            case SpeechResumed():
                return self._on_resume(event)
            case UtteranceEnded():
                return self._on_end_of_turn(event)
            case EndOfTurnScore():
                active = self._active
                if active is None or active.confirmed:
                    return []
                active.end_probability = event.probability
                if active.score_pending and active.text is not None:
                    active.score_pending = False
                    return self._judge_end_of_turn(active, active.text, event.at)
                active.score_pending = False
                return []
            case Transcript():
                return self._on_transcript(event)
            case PlaybackStarted():
                if self._active and self._active.turn_id == event.turn_id:
                    self._active.playback_started_at = event.at
                if self._is_live_confirmed(event.turn_id):
                    return self._set_state(AssistantState.SPEAKING, event.at)
                return []
            case PlaybackEnded():
                return self._on_playback_ended(event)
            case SpeechAudio():
                self._hold.spoke(event.text)
                return []
            case StageFailed():
                return self._on_failure(event)
            case _:
                return []

    # ---- handlers -------------------------------------------------------------------

    def _on_speech_started(self, event: SpeechStarted) -> list[Command]:
        if self.muted:
            return []
        self._user_speaking = True
        commands: list[Command] = []
        self._speech_over_assistant = event.over_assistant
        active = self._active
        if active and active.confirmed and not self._reply_heard_before(active, event):
            return [*self._reopen(active, event.at), *self._settle(event.at)]
        if active and active.confirmed and self.barge_in.enabled:
            # The listener has already paused the reply; the user's words decide whether
            # it is dropped (a request) or plays on (echo, a cough, "mm-hm").
            self._hold.hold(active, event.at)
            self._active = None
        elif event.over_assistant:
            commands.append(ResumePlayback())  # nothing to hold: never leave sound paused
        if self._active is None:
            commands += self._set_state(AssistantState.LISTENING, event.at)
        return commands

    @staticmethod
    def _reply_heard_before(turn: TurnInFlight, event: SpeechStarted) -> bool:
        """Whether the reply was audible when this speech *began*. Speech confirmed 160 ms
        after it began may be confirmed just after a fast reply started: it still went on
        from the user's own pause (it cannot be that reply's echo), so the turn reopens
        rather than being taken for a barge-in that leaves the first words unanswered."""
        started = turn.playback_started_at
        return started is not None and event.speech_start >= started

    def _resume_held(self, at: float) -> list[Command]:
        held = self._hold.release()
        if held is None:
            return []
        self._active = held
        return [
            ResumePlayback(),
            Publish(PlaybackResumed(at)),
            *self._set_state(AssistantState.SPEAKING, at),
        ]

    def _on_pause(self, event: SpeechPaused) -> list[Command]:
        if self.muted or not self.speculative or self._active is not None:
            return []
        commands = self._start(event, True)
        if self._active is not None:
            self._active.pause_at = stream_end(event)
            self._active.score_pending = event.score_follows
        return commands

    def _on_resume(self, event: SpeechResumed) -> list[Command]:
        if self._active and not self._active.confirmed:
            return self._cancel(event.at, "user resumed")
        return []

    def _on_end_of_turn(self, event: UtteranceEnded) -> list[Command]:
        self._user_speaking = False
        if self.muted:
            return []
        active = self._active
        if active is not None and not active.confirmed:
            if active.abandoned:
                self._active = None
                return self._settle(event.at)
            active.confirmed = True
            self._carry = None  # the confirmed turn holds the carried words now
            if active.user_text is not None:
                self.history.expect(active.turn_id, active.user_text)
            return [
                Publish(
                    TurnConfirmed(active.turn_id, event.at, event.speech_start, event.speech_end)
                ),
                ReleaseTurn(active.turn_id),
                *self._set_state(AssistantState.THINKING, event.at),
            ]
        if active is not None:
            return []  # a confirmed turn is still answering; barge-in is off
        commands = self._start(event, False)
        return [*commands, *self._set_state(AssistantState.THINKING, event.at)]

    def _on_transcript(self, event: Transcript) -> list[Command]:
        active = self._active
        if active is None or active.turn_id != event.turn_id:
            return []
        text = event.text.strip()
        not_the_user = active.over_assistant and self._hold.not_the_user(text)
        if not text or not_the_user:
            # Nothing was said (a noise), or speech over the assistant that was its own
            # echo, a hallucination on it, or a backchannel: drop the turn (a speculative
            # one stays marked abandoned so its end of turn does not start it again), and
            # a reply paused under it plays on.
            active.abandoned = True
            commands: list[Command] = [
                Publish(TurnCancelled(active.turn_id, event.at,
                                      NOT_THE_USER if not_the_user else "no words")),
                CancelTurn(active.turn_id),
            ]
            if active.confirmed:
                self._active = None
            if self._hold.held is not None:
                commands += self._resume_held(event.at)
            elif active.confirmed:
                commands += self._settle(event.at)
            return commands
        active.text = text
        commands = self._hold.confirm(event.at)  # the words show it is the user
        if self._hold.interrupted is None:
            commands += self._respond(active)
        # else: answered once the interrupted reply reports what of it was heard
        if (not active.confirmed and active.pause_at is not None and self.words_end_turns
                and not active.score_pending):  # else judged when the score comes
            commands += self._judge_end_of_turn(active, text, event.at)
        return commands

    def _judge_end_of_turn(self, turn: TurnInFlight, text: str, at: float) -> list[Command]:
        """The user is still quiet after the pause that started this speculative turn, and
        its words are known now: combine them with the audio model's call. This costs the
        reply nothing: it could not start before the transcript anyway."""
        if not self.words_end_turns or turn.pause_at is None:
            return []
        verdict = judge_text(text)
        call = end_of_turn_call(verdict, turn.end_probability, self.complete_threshold)
        decided = EndOfTurnDecided(turn.turn_id, at, turn.end_probability, verdict.value,
                                   call is EndOfTurnCall.END_NOW)
        return [Publish(decided), JudgeEndOfTurn(turn.pause_at, call)]

    def _on_playback_ended(self, event: PlaybackEnded) -> list[Command]:
        commands: list[Command] = []
        barged_in, unheard = self._hold.playback_ended(event.turn_id, event.played_s)
        ended = self.history.commit(event.turn_id, event.heard_text, unheard, event.at)
        if ended is not None:
            commands.append(Publish(ended))
        if barged_in:
            commands += self._respond_to_waiting_turn()
        if self._active and self._active.turn_id == event.turn_id and self._active.confirmed:
            self._active = None
            commands += self._settle(event.at)
        return commands

    def _respond_to_waiting_turn(self) -> list[Command]:
        """The turn that interrupted a reply had its words first; answer it now that the
        interrupted reply's heard part is in the history."""
        active = self._active
        if active is None or active.text is None or active.user_text is not None:
            return []
        return self._respond(active)

    def _respond(self, turn: TurnInFlight) -> list[Command]:
        assert turn.text is not None
        turn.user_text, messages = self.history.request(turn.text)
        if turn.confirmed:
            self.history.expect(turn.turn_id, turn.user_text)
        return [Respond(turn.turn_id, messages)]

    def _on_failure(self, event: StageFailed) -> list[Command]:
        commands: list[Command] = self._resume_held(0.0)  # a failed check never mutes it
        if self._active and event.turn_id == self._active.turn_id:
            commands += self._cancel(0.0, f"{event.stage} failed")
        return [*commands, *self._set_state(AssistantState.ERROR, 0.0)]

    # ---- helpers --------------------------------------------------------------------

    def _is_live_confirmed(self, turn_id: int) -> bool:
        return bool(self._active and self._active.turn_id == turn_id and self._active.confirmed)

    def _start(self, event: SpeechPaused | UtteranceEnded, held: bool) -> list[Command]:
        at, speech_start, speech_end = event.at, event.speech_start, event.speech_end
        utterance = HeldAudio(event.audio, stream_end(event))
        carry = self._carry
        if carry is not None:
            starts = utterance.end - utterance.samples.size / self.sample_rate
            if starts - carry.end <= self.carry_for_s:
                utterance = join_utterances(carry, utterance, self.sample_rate)
            else:
                self._carry = None
        turn = TurnInFlight(turn_id=self._next_id, confirmed=not held, audio=utterance,
                     over_assistant=self._speech_over_assistant)
        self._next_id += 1
        self._active = turn
        started = TurnStarted(turn.turn_id, at, speech_start, speech_end, speculative=held)
        commands: list[Command] = [Publish(started)]
        if not held:
            self._carry = None  # the confirmed turn holds the carried words now
            commands.append(Publish(TurnConfirmed(turn.turn_id, at, speech_start, speech_end)))
        commands.append(StartTurn(turn.turn_id, utterance.samples, held))
        return commands

    def _reopen(self, turn: TurnInFlight, at: float) -> list[Command]:
        """Drop a confirmed turn the user talked on over before hearing its reply, and
        carry its words into the next turn."""
        self._active = None
        self.history.forget(turn.turn_id)
        self._carry = turn.audio
        return [Publish(TurnCancelled(turn.turn_id, at, REOPENED)), CancelTurn(turn.turn_id)]

    def _cancel(self, at: float, reason: str) -> list[Command]:
        """Cancel the live turn. A confirmed one still gets committed (with what was
        heard) when the speaker reports PlaybackEnded for it."""
        active = self._active
        if active is None:
            return []
        self._active = None
        return [Publish(TurnCancelled(active.turn_id, at, reason)), CancelTurn(active.turn_id)]

    def _settle(self, at: float) -> list[Command]:
        """Show what is going on: an answer in flight (muted or not), else muted, else
        whether the user is talking."""
        active = self._active
        if active is not None:
            if not active.confirmed:
                return self._set_state(AssistantState.LISTENING, at)
            speaking = active.playback_started_at is not None
            return self._set_state(
                AssistantState.SPEAKING if speaking else AssistantState.THINKING, at)
        if self.muted:
            return self._set_state(AssistantState.MUTED, at)
        idle = AssistantState.LISTENING if self._user_speaking else AssistantState.IDLE
        return self._set_state(idle, at)

    def _set_state(self, state: AssistantState, at: float) -> list[Command]:
        if state is self.state:
            return []
        self.state = state
        return [Publish(StateChanged(state, at))]
