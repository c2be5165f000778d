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
    Transcript,
    TurnCancelled,
    TurnConfirmed,
    UtteranceEnded,
)
from app.core.held_audio import stream_end
from app.core.turn_commands import (
    NOT_THE_USER,
    OTHER_VOICE,
    USER_RESUMED,
    CancelTurn,
    Command,
    Publish,
    ReleaseTurn,
    ResumePlayback,
)
from app.core.turn_phase import TurnInFlight
from app.core.turn_state import TurnState
from app.core.utterance_text import without_sound_tags


class TurnMachine(TurnState):
    """Events in, commands out: one handler per event (the module docstring)."""

    def set_muted(self, muted: bool, at: float) -> list[Command]:
        self.muted = muted
        commands: list[Command] = []
        if muted:
            self._user_speaking = False
            self.opener.forget_carried()
            if self._active and not self._active.confirmed:
                commands += self.cancel_live(at, "muted")
            commands += self._resume_held(at)  # the user stopped listening to themselves
        return [*commands, *self._settle(at)]

    def typed(self, text: str, at: float) -> list[Command]:
        """Words typed in the window: a confirmed turn answered like a spoken one (muted
        or not). A reply still going is interrupted as if talked over, and the typed turn
        is answered once what of it was heard is in the history."""
        if not text.strip():
            return []
        commands: list[Command] = []
        active = self._active
        if active is not None and active.confirmed:
            self._hold.hold(active, at)
            self._active = None
        elif active is not None:
            commands += self.cancel_live(at, "typed over")
        commands += self._hold.confirm(at)  # the reply going (or held) is talked over
        self._active, opened = self.opener.open_typed(text.strip(), at)
        return [*commands, *opened, *self._set_state(AssistantState.THINKING, at)]

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
        active = self._active
        if active and not active.confirmed:
            return self.cancel_live(event.at, USER_RESUMED)
        if not event.over_assistant or self.muted:
            return []
        if active and self.barge_in.enabled:
            # The reply played on after this voice's first words were not the user's
            # (echo, "mm-hm", nothing heard); the listener paused it again as the voice
            # went on: hold it again; the words of the whole utterance decide (not the
            # clock: the echo that paused it may be leaking still).
            self._hold.hold(active, event.at, words_only=True)
            self._active = None
            return self._set_state(AssistantState.LISTENING, event.at)
        return [ResumePlayback()]  # nothing to hold: never leave sound paused

    def _on_end_of_turn(self, event: UtteranceEnded) -> list[Command]:
        self._user_speaking = False
        if self.muted:
            return []
        active = self._active
        if active is not None and not active.confirmed:
            if active.abandoned:
                self._active = None
                if active.carried is not None and active.other_voice:
                    active.confirmed = True
                    return self._ask_again(active, event.at)
                return self._settle(event.at)
            active.confirmed = True
            self.opener.confirmed()
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
        text = without_sound_tags(event.text)  # "(laughs)" alone: nothing said
        not_the_user = (active.over_assistant and self._hold.not_the_user(text)) or (
            self._hold.acknowledges(text, active.speech_start))
        if not text or not_the_user or event.other_voice:
            # Nothing was said (a noise, a laugh), speech over the assistant that was its
            # own echo, a hallucination on it, a backchannel (over it or just after it), or
            # a voice not enrolled that did not call the companion: drop the turn (a
            # speculative one stays marked abandoned so its end of turn does not start it
            # again), and a reply paused under it plays on.
            active.abandoned = True
            active.other_voice = event.other_voice
            reason = (OTHER_VOICE if event.other_voice
                      else NOT_THE_USER if not_the_user else "no words")
            commands: list[Command] = [
                Publish(TurnCancelled(active.turn_id, event.at, reason)),
                CancelTurn(active.turn_id),
            ]
            if active.confirmed:
                self._active = None
            if self._hold.held is not None:
                self._hold.dismissed = text  # should this voice go on, what follows counts
                commands += self._resume_held(event.at)
            elif event.other_voice and active.carried is not None:
                return [*commands, *self._ask_again(active, event.at)]
            elif active.confirmed:
                commands += self._settle(event.at)
            return commands
        carried = self.opener.take_typed() if active.typed is None else None
        active.text = f"{carried} {text}" if carried else text
        commands = self._hold.confirm(event.at)  # the words show it is the user
        if self._hold.interrupted is None:
            commands += self._respond(active)
        # else: answered once the interrupted reply reports what of it was heard
        return [*commands, *self.end_of_turn.on_words(active, text, event.at)]

    def _ask_again(self, dropped: TurnInFlight, at: float) -> list[Command]:
        """Another voice spoke before the user's reply was heard: the user's request (that
        turn was reopened for it) is asked again alone, once the other voice's turn is
        over (a speculative one: at its end of turn)."""
        if not dropped.confirmed:
            return []  # ``_on_end_of_turn`` asks it
        assert dropped.carried is not None
        self._active, commands = self.opener.open_carried(dropped.carried, at)
        return [*commands, *self._set_state(AssistantState.THINKING, at)]

    def _on_playback_ended(self, event: PlaybackEnded) -> list[Command]:
        commands: list[Command] = []
        barged_in, unheard = self._hold.playback_ended(event.turn_id, event.played_s, event.at)
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

    def _on_failure(self, event: StageFailed) -> list[Command]:
        commands: list[Command] = self._resume_held(0.0)  # a failed check never mutes it
        if self._active and event.turn_id == self._active.turn_id:
            commands += self.cancel_live(0.0, f"{event.stage} failed")
        return [*commands, *self._set_state(AssistantState.ERROR, 0.0)]

