"""The built-in tools at work in a live conversation.

A request the rules recognise ("set a timer for five minutes", "what time is it", "note
that...") is answered by the tool, not the model: its spoken line is the reply, said and
kept in the history like the model's (``VoicePipeline.set_reply_script``). The embedded
model cannot call tools; the rules work with any model, in English, Japanese and Mandarin.
A reply that was never heard (a speculative turn the user talked on through) takes back
the timers it set, so finishing the sentence does not set a second one. Timers and
reminders that come due are said first, once nobody is talking (``announce``), and each is
handed to ``on_ring`` (the window shows it); ``pending`` and ``cancel`` serve the window's
list of timers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from app.core.events import PipelineEvent, TurnCancelled, TurnCommitted, TurnConfirmed
from app.core.pipeline import VoicePipeline
from app.core.turn_commands import REOPENED, USER_RESUMED
from app.storage.history import Database
from app.storage.notes import NoteStore
from app.storage.reminders import ReminderStore
from app.tools import intents, phrases
from app.tools.builtin import builtin_registry
from app.tools.clock import Now, local_now
from app.tools.confirmation import (
    Answer,
    Confirms,
    PendingCall,
    Permissions,
    declined,
    did_tool,
    done_after_click,
    done_before_stop,
)
from app.tools.records import Reminder, ReminderBook
from app.tools.spec import Tool, ToolCall, ToolRegistry, ToolResult, ToolSpec

log = logging.getLogger(__name__)

CONFIRM_POLL_S = 0.05
"""How often a waiting side-effect call looks at its cancel event."""
DUE_POLL_S = 1.0
"""How often the desk looks for timers that came due (they ring within a second)."""


TAKEN_BACK = (REOPENED, USER_RESUMED)
"""Cancellations that leave the request open: what its tool did is undone."""
SWITCHED = "persona changed"
"""A cancellation after which another persona speaks: it does not report the last one's
tools."""


@dataclass(frozen=True)
class Rang:
    """A timer or reminder came due: ``text`` is what is said (or shown, while muted)."""

    reminder: Reminder
    text: str


class ToolDesk:
    def __init__(self, registry: ToolRegistry, reminders: ReminderBook,
                 now: Now = local_now, on_ring: Callable[[Rang], None] | None = None) -> None:
        self.registry, self.reminders, self._now = registry, reminders, now
        self._builtins = [t for spec in registry.specs
                          if (t := registry.get(spec.name)) is not None]
        self.on_tools: Callable[[Sequence[ToolSpec]], None] | None = None
        """Told the offered tools whenever they change (the pipeline offers them)."""
        self.on_ring = on_ring
        """Told of each ring before it is said (called on the ticker thread: post only)."""
        self._lock = threading.Lock()
        """The controller thread answers, the telemetry thread takes back, the ticker rings."""
        self._turns_changed = threading.Condition(self._lock)
        self._confirmed: deque[int] = deque(maxlen=64)
        """The latest confirmed turns (a user's side-effect tool waits for its own)."""
        self._set_by_turn: dict[int, set[int]] = {}
        self._done_by_turn: dict[int, list[tuple[str, str]]] = {}
        """What each live turn's tools changed: (spoken line, language)."""
        self.permissions = Permissions()
        self.on_question: Callable[[PendingCall], None] | None = None
        """Told of a call that waits for the user's yes (the window asks too)."""
        self._say: Callable[[str], None] | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def reply(self, turn_id: int, text: str, language: str) -> str | None:
        """The tool's answer to a request the rules recognise, else None (ask the model).
        A plain yes or no to a question about a waiting call settles it first: a yes goes
        to the model (it makes the call again, now allowed), a no is answered here."""
        with self._lock:
            answer = self.permissions.hear(text, language)
        if answer is Answer.NO:
            return declined(language)
        if answer is not None:
            return None
        call = intents.parse(text, self._now(), language)
        if call is None:
            return None
        with self._lock:
            result = self._run_builtin(replace(call, turn_id=turn_id), threading.Event())
        log.info("turn %d: answered by the %s tool (%s)", turn_id, call.name,
                 "ok" if result.ok else "failed")
        return result.spoken or None

    def _run_builtin(self, call: ToolCall, cancel: threading.Event) -> ToolResult:
        """Under the lock: run a built-in, noting the timers it set for its turn."""
        before = {r.id for r in self.reminders.pending()}
        result = self.registry.run(call, cancel)
        made = {r.id for r in self.reminders.pending()} - before
        if made and call.turn_id is not None:
            self._set_by_turn.setdefault(call.turn_id, set()).update(made)
        self._note_done(call, result)
        return result

    def _note_done(self, call: ToolCall, result: ToolResult) -> None:
        tool = self.registry.get(call.name)
        if result.ok and call.turn_id is not None and tool is not None \
                and tool.spec.side_effects:
            line = result.spoken or did_tool(call.name, call.language)
            self._done_by_turn.setdefault(call.turn_id, []).append((line, call.language))

    def set_extra_tools(self, tools: Sequence[Tool], confirms: Confirms | None = None) -> None:
        """Offer ``tools`` (a user's MCP servers') beside the built-ins from the next reply
        on, replacing the ones offered before; ``confirms`` says which of them ask the
        user first. ``on_tools`` tells the pipeline."""
        with self._lock:
            self.registry = ToolRegistry([*self._builtins, *tools])
            self.permissions.confirms = confirms
            specs = self.registry.specs
        if self.on_tools is not None:
            self.on_tools(specs)

    def run_call(self, call: ToolCall, cancel: threading.Event) -> ToolResult:
        """A call the model made in its own format (on a tool thread, bounded). The
        built-ins run under the desk's lock (they share the timers with the ticker); a
        user's server does not, so one that hangs stalls nothing else."""
        with self._lock:
            registry = self.registry
            builtin = registry.get(call.name) in self._builtins
            ask = self.permissions.gate(call, builtin)
            if ask is None and builtin:
                return self._run_builtin(call, cancel)
            pending = self.permissions.pending
        if ask is not None:
            log.info("%s waits for the user's yes", call.name)
            if self.on_question is not None and pending is not None:
                self.on_question(pending)
            return ask
        tool = registry.get(call.name)
        if tool is not None and tool.spec.side_effects and call.turn_id is not None \
                and not self._await_confirmed(call.turn_id, cancel):
            return ToolResult.failure(f"{call.name} was not run: the user went on speaking.")
        result = registry.run(call, cancel)
        with self._lock:
            self._note_done(call, result)
        return result

    def _await_confirmed(self, turn_id: int, cancel: threading.Event) -> bool:
        """A user's tool that changes something waits until its turn is confirmed: a
        speculative reply the user talks on through must not have acted (its effect could
        not be taken back, and the finished request would act again). False: cancelled."""
        with self._turns_changed:
            while turn_id not in self._confirmed:
                if cancel.is_set():
                    return False
                self._turns_changed.wait(CONFIRM_POLL_S)
        return True

    def allow(self, call_id: str, always: bool = False) -> bool:
        """The window's Allow (or Always allow) for the waiting call: it runs now, off
        the caller's thread, and what it did is said. False when nothing waits."""
        with self._lock:
            call = self.permissions.take(call_id, always)
            registry = self.registry
        if call is None:
            return False
        say = self._say

        def work() -> None:
            result = registry.run(call)
            log.info("%s, allowed in the window: %s", call.name, "ok" if result.ok else "failed")
            if say is not None:
                say(done_after_click(call.name, result.spoken, result.ok, call.language))

        threading.Thread(target=work, name=f"tool-{call.name}", daemon=True).start()
        return True

    def deny(self, call_id: str) -> None:
        """The window's Don't: the waiting call is dropped."""
        with self._lock:
            self.permissions.drop(call_id)

    def observe(self, event: PipelineEvent) -> None:
        """A committed turn keeps what its tool did, and so does one talked over (its
        answer was cut, the timer was set); one whose request stayed open because the user
        went on before hearing it takes it back: the finished request is answered anew."""
        if isinstance(event, TurnConfirmed):
            with self._turns_changed:
                self._confirmed.append(event.turn_id)
                self._turns_changed.notify_all()
        elif isinstance(event, TurnCommitted):
            with self._lock:
                self._set_by_turn.pop(event.turn_id, None)
                self._done_by_turn.pop(event.turn_id, None)
        elif isinstance(event, TurnCancelled) and event.reason.startswith(TAKEN_BACK):
            with self._lock:
                for reminder_id in self._set_by_turn.pop(event.turn_id, set()):
                    self.reminders.cancel(reminder_id)
                self._done_by_turn.pop(event.turn_id, None)
        elif isinstance(event, TurnCancelled):  # talked over, typed over, muted
            with self._lock:
                done = self._done_by_turn.pop(event.turn_id, [])
            if done and self._say is not None and event.reason != SWITCHED:
                lines, language = " ".join(line for line, _ in done), done[0][1]
                self._say(done_before_stop(lines, language))

    def pending(self) -> list[Reminder]:
        """The timers and reminders still to ring, soonest first (the window's list)."""
        with self._lock:
            return self.reminders.pending()

    def cancel(self, reminder_id: int) -> bool:
        """Cancel one (from the window); False when it had already rung or gone."""
        with self._lock:
            for made in self._set_by_turn.values():
                made.discard(reminder_id)
            return self.reminders.cancel(reminder_id)

    def ring_due(self, say: Callable[[str], None], now: float | None = None) -> int:
        """Say every timer and reminder that came due (once each); returns how many."""
        with self._lock:
            due = self.reminders.due(time.time() if now is None else now)
            for reminder in due:
                zone = self._now().tzinfo
                text = phrases.fired(reminder, datetime.fromtimestamp(reminder.due_at, zone))
                if self.on_ring is not None:  # first: the window has it before any notice
                    self.on_ring(Rang(reminder, text))
                say(text)
                self.reminders.mark_fired(reminder.id)
        return len(due)

    def start(self, say: Callable[[str], None]) -> None:
        """Ring timers through ``say`` (the pipeline's first words), which also says
        what a talked-over turn's tools had done and what a clicked call did."""
        self._say = say
        def loop() -> None:
            while not self._stop.wait(DUE_POLL_S):
                try:
                    self.ring_due(say)
                except Exception:  # a database hiccup: the next look tries again
                    log.exception("checking the timers failed")

        self._ticker = threading.Thread(target=loop, name="tool-timers", daemon=True)
        self._ticker.start()

    def stop(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(2)


def attach_tools(pipeline: VoicePipeline, db: Database,
                 on_ring: Callable[[Rang], None] | None = None) -> ToolDesk:
    """The built-in tools on ``pipeline``: requests they answer, and timers that ring
    (each also handed to ``on_ring``)."""
    reminders = ReminderStore(db)
    desk = ToolDesk(builtin_registry(reminders, NoteStore(db)), reminders, on_ring=on_ring)
    pipeline.set_reply_script(desk.reply)
    pipeline.use_tools(desk.registry.specs, desk.run_call)
    desk.on_tools = lambda specs: pipeline.use_tools(specs, desk.run_call)
    pipeline.add_observer(desk.observe)
    desk.start(pipeline.announce)
    return desk
