"""Random event orders through the real controller, turn machine and playback queue.

Hypothesis plays the user (speech that starts, pauses, resumes, ends), the recognizer
(transcripts of requests, backchannels, echo and noise), the voice (replies synthesized
when asked), the speaker (blocks pulled), the mute button and failing stages, in any
order, and checks after every step the invariants users depend on:
- playback is never left paused without a reply held for a barge-in;
- a turn is committed (or dropped as reopened) at most once, and once every reply has
  played out, each answered confirmed turn has been, exactly once;
- the history holds only what was heard;
- the state the window shows agrees with the machine's phase.
Nothing is threaded: the test drains the controller's inbox itself.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.events import (
    AssistantState,
    EndOfTurnScore,
    PipelineEvent,
    PlaybackEnded,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
    StageFailed,
    Transcript,
    TurnCancelled,
    TurnCommitted,
    TurnConfirmed,
    UtteranceEnded,
)
from app.core.pipeline import Engines, MonotonicClock, PipelineConfig, VoicePipeline
from app.core.turn_commands import REOPENED, Respond, StartTurn
from app.core.turn_phase import SHOWN_IN_PHASE, Phase

RATE = 16_000
AUDIO = np.full(3200, 0.1, dtype=np.float32)
SAID = st.sampled_from([
    "What time is it?", "Tell me a story about a dragon.", "Stop.", "mm-hm", "yeah",
    "", "Thank you.", "Once upon a time", "and then",
])


class SimClock(MonotonicClock):
    def __init__(self) -> None:
        super().__init__()
        self.t = 0.0

    def now(self) -> float:
        return self.t


class TurnOrders(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        engines = Engines(FakeVoiceActivity(), FakeRecognizer(), FakeLanguageModel(),
                          FakeSynthesizer(RATE, seconds_per_char=0.02))
        self.clock = SimClock()
        self.pipeline = VoicePipeline(engines, "You are Hana.", PipelineConfig(), self.clock)
        self.events: list[PipelineEvent] = []
        self.pipeline.add_observer(self.events.append)
        self.voice = "off"  # off / on / paused
        self.onset = 0.0
        self.answered: set[int] = set()
        self.muted = False

    # ---- the controller's loop, run by hand ----------------------------------------

    def drain(self) -> None:
        controller = self.pipeline.controller
        for _ in range(1000):
            controller.tick(self.clock.t)
            if controller.inbox.empty():
                self.pipeline.telemetry.drain()
                return
            message = controller.inbox.get_nowait()
            controller.execute(controller.machine.tick(self.clock.t))
            controller.handle(message)
        raise AssertionError("the controller's inbox never drained")

    def post(self, event: PipelineEvent) -> None:
        self.pipeline.controller.post(event)
        self.drain()

    # ---- the user --------------------------------------------------------------------

    @rule(dt=st.floats(0.01, 1.5))
    def time_passes(self, dt: float) -> None:
        self.clock.t += dt
        self.drain()

    @precondition(lambda self: self.voice == "off")
    @rule()
    def voice_starts(self) -> None:
        playback = self.pipeline.playback
        audible = playback.speaking or playback.paused
        if playback.speaking and not self.muted:  # the listener pauses the reply at onset
            playback.pause()
        self.voice, self.onset = "on", self.clock.t
        self.post(SpeechStarted(self.clock.t, self.clock.t - 0.16, over_assistant=audible))

    @precondition(lambda self: self.voice == "on")
    @rule(score_follows=st.booleans())
    def voice_pauses(self, score_follows: bool) -> None:
        self.voice = "paused"
        t = self.clock.t
        self.post(SpeechPaused(t, self.onset, t - 0.1, AUDIO, score_follows=score_follows))

    @precondition(lambda self: self.voice == "paused")
    @rule(probability=st.floats(0.0, 1.0))
    def audio_model_scores(self, probability: float) -> None:
        self.post(EndOfTurnScore(self.clock.t, probability))

    @precondition(lambda self: self.voice == "paused")
    @rule()
    def voice_resumes(self) -> None:
        self.voice = "on"
        self.post(SpeechResumed(self.clock.t))

    @precondition(lambda self: self.voice == "paused")
    @rule()
    def voice_ends(self) -> None:
        self.voice = "off"
        t = self.clock.t
        self.post(UtteranceEnded(t, self.onset, t - 0.3, AUDIO))

    @rule(muted=st.booleans())
    def mute_button(self, muted: bool) -> None:
        self.muted = muted
        self.voice = "off"  # the listener resets its endpointer: speech starts anew
        self.pipeline.set_muted(muted)
        self.drain()

    @rule(text=SAID)
    def user_types(self, text: str) -> None:
        self.pipeline.type_request(text)
        self.drain()

    # ---- the stages --------------------------------------------------------------------

    @rule(text=SAID)
    def recognizer_answers(self, text: str) -> None:
        inbox = self.pipeline.transcriber.inbox
        while not inbox.empty():
            job = inbox.get_nowait()
            if isinstance(job, StartTurn) and self.pipeline.live.is_live(job.turn_id):
                words = text if job.typed is None else job.typed  # typed: passed on as is
                self.post(Transcript(job.turn_id, words, self.clock.t))
                return

    @rule()
    def another_voice_is_heard(self) -> None:
        """The recognizer's voice check: not an enrolled voice, not called by name."""
        inbox = self.pipeline.transcriber.inbox
        while not inbox.empty():
            job = inbox.get_nowait()
            if isinstance(job, StartTurn) and self.pipeline.live.is_live(job.turn_id):
                if job.typed is None:
                    self.post(Transcript(job.turn_id, "", self.clock.t, other_voice=True))
                else:
                    self.post(Transcript(job.turn_id, job.typed, self.clock.t))
                return

    @rule(enrolled=st.booleans())
    def voices_are_enrolled(self, enrolled: bool) -> None:
        self.pipeline.machine.voices_enrolled = enrolled

    @rule()
    def voice_synthesizes(self) -> None:
        inbox = self.pipeline.responder.inbox
        while not inbox.empty():
            job = inbox.get_nowait()
            if isinstance(job, Respond) and self.pipeline.live.is_live(job.turn_id):
                self.answered.add(job.turn_id)
                playback = self.pipeline.playback
                playback.enqueue(job.turn_id, AUDIO, f"Answer {job.turn_id}.")
                playback.finish(job.turn_id)
        self.drain()

    @rule(blocks=st.integers(1, 40))
    def speaker_plays(self, blocks: int) -> None:
        for _ in range(blocks):
            self.pipeline.playback.pull(160, self.clock.t)
            self.clock.t += 0.01
            self.drain()

    @rule()
    def a_stage_fails(self) -> None:
        self.post(StageFailed("llm", "boom", self.pipeline.machine.live_turn_id))

    # ---- what users depend on ----------------------------------------------------------

    @invariant()
    def playback_is_paused_only_for_a_held_reply(self) -> None:
        if self.pipeline.playback.paused:
            assert self.pipeline.machine.phase is Phase.HELD_FOR_BARGE_IN

    @invariant()
    def each_turn_ends_at_most_once(self) -> None:
        ends = self._ends()
        assert all(count == 1 for count in ends.values()), ends

    @invariant()
    def history_holds_only_heard_text(self) -> None:
        heard = {e.heard_text.strip() for e in self.events if isinstance(e, PlaybackEnded)}
        for _user, assistant in self.pipeline.machine.conversation.exchanges:
            assert assistant in heard

    @invariant()
    def shown_state_agrees_with_the_phase(self) -> None:
        machine = self.pipeline.machine
        assert (machine.state is AssistantState.ERROR
                or machine.state in SHOWN_IN_PHASE[machine.phase]), (machine.state,
                                                                      machine.phase)

    def _ends(self) -> dict[int, int]:
        ends: dict[int, int] = {}
        for event in self.events:
            if isinstance(event, TurnCommitted) or (
                    isinstance(event, TurnCancelled) and event.reason == REOPENED):
                ends[event.turn_id] = ends.get(event.turn_id, 0) + 1
        return ends

    def teardown(self) -> None:
        """Let every reply play out: each answered, confirmed turn ended exactly once."""
        self.pipeline.set_muted(False)
        self.voice_synthesizes()
        for _ in range(2000):
            if self.pipeline.playback.idle():
                break
            self.pipeline.playback.resume()  # a reply still held would wait for words
            self.pipeline.playback.pull(160, self.clock.t)
            self.clock.t += 0.01
            self.drain()
        if not self.pipeline.playback.idle() or self.pipeline.machine.phase not in (
                Phase.IDLE, Phase.USER_SPEAKING, Phase.MUTED):
            return  # a turn still waiting for the user's words: nothing to settle yet
        confirmed = {e.turn_id for e in self.events if isinstance(e, TurnConfirmed)}
        ends = self._ends()
        for turn_id in confirmed & self.answered:
            assert ends.get(turn_id) == 1, (turn_id, ends)


TurnOrders.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
test_random_event_orders_keep_the_invariants = TurnOrders.TestCase
