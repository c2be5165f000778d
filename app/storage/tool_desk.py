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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from app.core.events import PipelineEvent, TurnCancelled, TurnCommitted
from app.core.pipeline import VoicePipeline
from app.core.turn_commands import REOPENED, USER_RESUMED
from app.storage.history import Database
from app.storage.notes import NoteStore
from app.storage.reminders import ReminderStore
from app.tools import intents, phrases
from app.tools.builtin import builtin_registry
from app.tools.clock import Now, local_now
from app.tools.records import Reminder, ReminderBook
from app.tools.spec import Tool, ToolCall, ToolRegistry, ToolResult, ToolSpec

log = logging.getLogger(__name__)

DUE_POLL_S = 1.0
"""How often the desk looks for timers that came due (they ring within a second)."""


TAKEN_BACK = (REOPENED, USER_RESUMED)
"""Cancellations that leave the request open: what its tool did is undone."""


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
        self._set_by_turn: dict[int, set[int]] = {}
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def reply(self, turn_id: int, text: str, language: str) -> str | None:
        """The tool's answer to a request the rules recognise, else None (ask the model)."""
        call = intents.parse(text, self._now(), language)
        if call is None:
            return None
        with self._lock:
            before = {r.id for r in self.reminders.pending()}
            result = self.registry.run(call)
            made = {r.id for r in self.reminders.pending()} - before
            if made:
                self._set_by_turn[turn_id] = made
        log.info("turn %d: answered by the %s tool (%s)", turn_id, call.name,
                 "ok" if result.ok else "failed")
        return result.spoken or None

    def set_extra_tools(self, tools: Sequence[Tool]) -> None:
        """Offer ``tools`` (a user's MCP servers') beside the built-ins from the next reply
        on, replacing the ones offered before; ``on_tools`` tells the pipeline."""
        with self._lock:
            self.registry = ToolRegistry([*self._builtins, *tools])
            specs = self.registry.specs
        if self.on_tools is not None:
            self.on_tools(specs)

    def run_call(self, call: ToolCall, cancel: threading.Event) -> ToolResult:
        """A call the model made in its own format (on a tool thread, bounded). The
        built-ins run under the desk's lock (they share the timers with the ticker); a
        user's server does not, so one that hangs stalls nothing else."""
        with self._lock:
            registry = self.registry
            if registry.get(call.name) in self._builtins:
                return registry.run(call, cancel)
        return registry.run(call, cancel)

    def observe(self, event: PipelineEvent) -> None:
        """A committed turn keeps what its tool did, and so does one talked over (its
        answer was cut, the timer was set); one whose request stayed open because the user
        went on before hearing it takes it back: the finished request is answered anew."""
        if isinstance(event, TurnCommitted):
            with self._lock:
                self._set_by_turn.pop(event.turn_id, None)
        elif isinstance(event, TurnCancelled) and event.reason.startswith(TAKEN_BACK):
            with self._lock:
                for reminder_id in self._set_by_turn.pop(event.turn_id, set()):
                    self.reminders.cancel(reminder_id)

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
