"""What the turn machine holds between events, and the moves every handler makes from it.

``TurnMachine`` (``turn``) is this plus one handler per event. The fields are the machine's
whole state; ``phase`` reads them as the explicit phase of ``turn_phase``'s table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.barge_in import BargeInPolicy
from app.core.conversation import Conversation
from app.core.events import (
    AssistantState,
    SpeechPaused,
    StateChanged,
    TurnCancelled,
    UtteranceEnded,
)
from app.core.reply_hold import ReplyHold
from app.core.turn_commands import CancelTurn, Command, Publish, Respond
from app.core.turn_end import EndOfTurnJudge
from app.core.turn_history import TurnHistory
from app.core.turn_opening import TurnOpener
from app.core.turn_phase import Phase, TurnInFlight, shown_state


@dataclass
class TurnState:
    history: TurnHistory
    """Where each turn's prompt comes from and what was heard of it goes."""
    speculative: bool = True
    barge_in: BargeInPolicy = field(default_factory=BargeInPolicy)
    opener: TurnOpener = field(default_factory=TurnOpener)
    """Turn numbers and the words a reopened turn carries into the next."""
    end_of_turn: EndOfTurnJudge = field(default_factory=EndOfTurnJudge)
    state: AssistantState = AssistantState.IDLE
    muted: bool = False
    voices_enrolled: bool = False
    """Each turn's voice is checked with its words (``voice_gate``): speech over a paused
    reply waits for them rather than interrupting it on time alone."""
    _active: TurnInFlight | None = None
    _user_speaking: bool = False
    _speech_over_assistant: bool = False
    _hold: ReplyHold = field(init=False)

    def __post_init__(self) -> None:
        self._hold = ReplyHold(self.barge_in)

    @property
    def phase(self) -> Phase:
        """What is going on, read from the fields (``turn_phase``'s table)."""
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

    def next_deadline(self) -> float | None:
        """When ``tick`` has something to do next (None: nothing is waiting)."""
        return None if self.voices_enrolled else self._hold.deadline()

    def tick(self, now: float) -> list[Command]:
        """The machine's one deadline: speech that goes on over a paused reply is a
        barge-in once it has lasted long enough, before its words are known."""
        deadline = self.next_deadline()
        if deadline is None or now < deadline:
            return []
        return self._hold.confirm(now)

    def _respond(self, turn: TurnInFlight) -> list[Command]:
        assert turn.text is not None
        turn.user_text, messages = self.history.request(turn.text)
        if turn.confirmed:
            self.history.expect(turn.turn_id, turn.user_text)
        return [Respond(turn.turn_id, messages)]

    # ---- helpers --------------------------------------------------------------------

    def _is_live_confirmed(self, turn_id: int) -> bool:
        return bool(self._active and self._active.turn_id == turn_id and self._active.confirmed)

    def _start(self, event: SpeechPaused | UtteranceEnded, held: bool) -> list[Command]:
        self._active, commands = self.opener.open(event, held, self._speech_over_assistant)
        return commands

    def _reopen(self, turn: TurnInFlight, at: float) -> list[Command]:
        """Drop a confirmed turn the user talked on over before hearing its reply, and
        carry its words into the next turn."""
        self._active = None
        self.history.forget(turn.turn_id)
        return self.opener.reopen(turn, at)

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
