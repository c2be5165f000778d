"""The turn state machine: who is talking, which turn is live, what to do next.

Pure: events in, commands out. The controller executes the commands (start recognition,
release or flush playback...) and feeds back what the stages report, and calls ``tick(now)``
for the one deadline the machine keeps. It owns no threads or clocks, so it is tested by
calling it.

Its phases, the states each shows and the transitions between them: ``turn_phase``.
When a speculative turn's pause ends it: ``turn_end``. What counts as a barge-in is
``app.core.barge_in``'s alone; the barge-in state (a held reply) is ``reply_hold``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.barge_in import BargeInPolicy
from app.core.conversation import Conversation
from app.core.events import (
    AssistantState,
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
from app.core.held_audio import CarriedWords, HeldAudio, stream_end
from app.core.reply_hold import ReplyHold
from app.core.turn_commands import (
    NOT_THE_USER,
    REOPENED,
    CancelTurn,
    Command,
    Publish,
    ReleaseTurn,
    Respond,
    ResumePlayback,
    StartTurn,
)
from app.core.turn_end import EndOfTurnJudge
from app.core.turn_history import TurnHistory
from app.core.turn_phase import Phase, TurnInFlight, shown_state


@dataclass
class TurnMachine:
    history: TurnHistory
    """Where each turn's prompt comes from and what was heard of it goes."""
    speculative: bool = True
    barge_in: BargeInPolicy = field(default_factory=BargeInPolicy)
    sample_rate: int = 16_000
    carry_for_s: float = 10.0
    """Carried words join the next utterance only if it starts within this long."""
    end_of_turn: EndOfTurnJudge = field(default_factory=EndOfTurnJudge)
    state: AssistantState = AssistantState.IDLE
    muted: bool = False
    _active: TurnInFlight | None = None
    _next_id: int = 1
    _user_speaking: bool = False
    _carry: CarriedWords = field(init=False)
    _speech_over_assistant: bool = False
    _hold: ReplyHold = field(init=False)

    def __post_init__(self) -> None:
        self._hold = ReplyHold(self.barge_in)
        self._carry = CarriedWords(self.sample_rate, self.carry_for_s)

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

    def set_muted(self, muted: bool, at: float) -> list[Command]:
        self.muted = muted
        commands: list[Command] = []
        if muted:
            self._user_speaking = False
            self._carry.audio = None
            if self._active and not self._active.confirmed:
                commands += self.cancel_live(at, "muted")
            commands += self._resume_held(at)  # the user stopped listening to themselves
        return [*commands, *self._settle(at)]

    def handle(self, event: PipelineEvent) -> list[Command]:
        """React to one pipeline event; events of stale turns are ignored."""
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
                return self.end_of_turn.on_score(self._active, event)
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

    # ---- handlers -------------------------------------------------------------------

    def _on_speech_started(self, event: SpeechStarted) -> list[Command]:
        if self.muted:
            return []
        self._user_speaking = True
        commands: list[Command] = []
        self._speech_over_assistant = event.over_assistant
        active = self._active
        if active and active.confirmed and not active.reply_audible_at(event.speech_start):
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
            return self.cancel_live(event.at, "user resumed")
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
            self._carry.audio = None  # the confirmed turn holds the carried words now
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
        return [*commands, *self.end_of_turn.on_words(active, text, event.at)]

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
            commands += self.cancel_live(0.0, f"{event.stage} failed")
        return [*commands, *self._set_state(AssistantState.ERROR, 0.0)]

    # ---- helpers --------------------------------------------------------------------

    def _is_live_confirmed(self, turn_id: int) -> bool:
        return bool(self._active and self._active.turn_id == turn_id and self._active.confirmed)

    def _start(self, event: SpeechPaused | UtteranceEnded, held: bool) -> list[Command]:
        at, speech_start, speech_end = event.at, event.speech_start, event.speech_end
        utterance = self._carry.onto(HeldAudio(event.audio, stream_end(event)))
        turn = TurnInFlight(turn_id=self._next_id, confirmed=not held, audio=utterance,
                     over_assistant=self._speech_over_assistant)
        self._next_id += 1
        self._active = turn
        started = TurnStarted(turn.turn_id, at, speech_start, speech_end, speculative=held)
        commands: list[Command] = [Publish(started)]
        if not held:
            self._carry.audio = None  # the confirmed turn holds the carried words now
            commands.append(Publish(TurnConfirmed(turn.turn_id, at, speech_start, speech_end)))
        commands.append(StartTurn(turn.turn_id, utterance.samples, held))
        return commands

    def _reopen(self, turn: TurnInFlight, at: float) -> list[Command]:
        """Drop a confirmed turn the user talked on over before hearing its reply, and
        carry its words into the next turn."""
        self._active = None
        self.history.forget(turn.turn_id)
        self._carry.audio = turn.audio
        return [Publish(TurnCancelled(turn.turn_id, at, REOPENED)), CancelTurn(turn.turn_id)]

    def cancel_live(self, at: float, reason: str) -> list[Command]:
        """Cancel the live turn. A confirmed one still gets committed (with what was
        heard) when the speaker reports PlaybackEnded for it."""
        active = self._active
        if active is None:
            return []
        self._active = None
        return [Publish(TurnCancelled(active.turn_id, at, reason)), CancelTurn(active.turn_id)]

    def _settle(self, at: float) -> list[Command]:
        return self._set_state(shown_state(self._active, self.muted, self._user_speaking), at)

    def _set_state(self, state: AssistantState, at: float) -> list[Command]:
        if state is self.state:
            return []
        self.state = state
        return [Publish(StateChanged(state, at))]
