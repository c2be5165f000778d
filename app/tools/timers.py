"""Timers and reminders: ``set_timer``, ``set_reminder``, ``list_timers``, ``cancel_timer``.

They are kept through a ``ReminderBook`` (the app's database), so they survive a restart;
whoever runs the app asks the book for ``due(now)`` and speaks ``phrases.fired`` for each.
"""

from __future__ import annotations

import re
import threading
from datetime import date, datetime, time, timedelta

from app.tools import phrases
from app.tools.clock import Now, local_now
from app.tools.records import Kind, Reminder, ReminderBook
from app.tools.spec import Arguments, ToolResult, ToolSpec

MAX_TIMER_S = 24 * 3600
MAX_AHEAD_DAYS = 366
_HHMM = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")
_WORD = re.compile(r"\w+")


def next_at(clock: time, now: datetime, on: date | None = None) -> datetime | None:
    """``clock`` on ``on`` (None if that is past), or its next occurrence after ``now``."""
    if on is not None:
        when = datetime.combine(on, clock, now.tzinfo)
        return when if when > now else None
    when = datetime.combine(now.date(), clock, now.tzinfo)
    return when if when > now else datetime.combine(now.date() + timedelta(days=1), clock,
                                                    now.tzinfo)


class SetTimer:
    spec = ToolSpec(
        name="set_timer",
        description="Start a countdown timer; it rings aloud when it is done.",
        parameters={"type": "object", "properties": {
            "seconds": {"type": "integer", "minimum": 1, "maximum": MAX_TIMER_S,
                        "description": "Its length in seconds (at most a day)."},
            "label": {"type": "string", "maxLength": 60,
                      "description": "A name if the user gave one, e.g. pasta."}},
            "required": ["seconds"], "additionalProperties": False},
        side_effects=True,
    )

    def __init__(self, book: ReminderBook, now: Now = local_now) -> None:
        self.book, self.now = book, now

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        seconds = int(str(arguments["seconds"]))
        label = " ".join(str(arguments.get("label", "")).split())
        now = self.now().timestamp()
        timer = self.book.add("timer", label, now + seconds, created_at=now,
                              duration_s=float(seconds), language=language)
        spoken = phrases.timer_set(seconds, label, language)
        return _kept(self.book, f"Timer {timer.id} set for {seconds} s.", spoken, language)


def _kept(book: ReminderBook, text: str, spoken: str, language: str) -> ToolResult:
    if book.unsaved:
        return ToolResult(text + " (Kept for this session only: the disk refused it.)",
                          phrases.joined(spoken, phrases.not_saved(language), language))
    return ToolResult(text, spoken)


class SetReminder:
    spec = ToolSpec(
        name="set_reminder",
        description="Remind the user of something at a time of day, or in some minutes; "
                    "it is said aloud then.",
        parameters={"type": "object", "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 300,
                     "description": "What to do, as a short verb phrase: call mum."},
            "at": {"type": "string", "description": "Local time, 24-hour HH:MM; the next "
                                                    "time it comes unless date is given."},
            "date": {"type": "string", "description": "YYYY-MM-DD, if not the next day "
                                                      "the time comes."},
            "in_minutes": {"type": "number", "minimum": 1, "maximum": 60 * 24 * 7,
                           "description": "Instead of at: this many minutes from now."}},
            "required": ["text"], "additionalProperties": False},
        side_effects=True,
    )

    def __init__(self, book: ReminderBook, now: Now = local_now) -> None:
        self.book, self.now = book, now

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        now = self.now()
        text = " ".join(str(arguments["text"]).split())
        due = self._due(arguments, now)
        if isinstance(due, str):
            return ToolResult.failure(f"set_reminder: {due}")
        reminder = self.book.add("reminder", text, due.timestamp(),
                                 created_at=now.timestamp(), language=language)
        spoken = phrases.reminder_set(due, now, text, language)
        return _kept(self.book, f"Reminder {reminder.id} set for {due:%Y-%m-%d %H:%M}: {text}",
                     spoken, language)

    @staticmethod
    def _due(arguments: Arguments, now: datetime) -> datetime | str:
        minutes = arguments.get("in_minutes")
        if isinstance(minutes, int | float) and not isinstance(minutes, bool):
            return now + timedelta(minutes=float(minutes))
        at = _HHMM.fullmatch(str(arguments.get("at", "")).strip())
        if not at:
            return "give at (HH:MM, 24-hour) or in_minutes."
        on = None
        if arguments.get("date"):
            try:
                on = date.fromisoformat(str(arguments["date"]))
            except ValueError:
                return "date must be YYYY-MM-DD."
        due = next_at(time(int(at.group(1)), int(at.group(2))), now, on)
        if due is None:
            return "that time has passed."
        if (due - now).days > MAX_AHEAD_DAYS:
            return "that is more than a year away."
        return due


class ListTimers:
    spec = ToolSpec(
        name="list_timers",
        description="The timers and reminders still to ring, soonest first.",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
        side_effects=False,
    )

    def __init__(self, book: ReminderBook, now: Now = local_now) -> None:
        self.book, self.now = book, now

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        now = self.now()
        pending = self.book.pending()
        return ToolResult(describe(pending, now) or "None.",
                          phrases.listing(pending, now, language))


def describe(reminders: list[Reminder], now: datetime) -> str:
    """For the model: one line each, with the id cancel_timer takes."""
    return "\n".join(
        f"{r.kind} {r.id}: {r.label or '(no label)'}, due "
        f"{datetime.fromtimestamp(r.due_at, now.tzinfo):%Y-%m-%d %H:%M}" for r in reminders)


def matching(pending: list[Reminder], words: str) -> list[Reminder]:
    """The ones whose label shares a word with ``words`` (for CJK: contains it, or is in
    it), best first."""
    wanted = {w.lower() for w in _WORD.findall(words)}
    scored = []
    for r in pending:
        label = r.label.lower()
        have = set(_WORD.findall(label))
        score = len(wanted & have) + sum(1 for w in wanted if len(w) > 1 and w not in have
                                         and (w in label or (label and label in w)))
        if score:
            scored.append((score, r))
    best = max((s for s, _ in scored), default=0)
    return [r for s, r in scored if s == best]


class CancelTimer:
    spec = ToolSpec(
        name="cancel_timer",
        description="Cancel a timer or reminder: by id (from list_timers), by words of its "
                    "label, or the only one there is.",
        parameters={"type": "object", "properties": {
            "id": {"type": "integer"},
            "label": {"type": "string", "maxLength": 300,
                      "description": "Words of its label or errand."},
            "kind": {"type": "string", "enum": ["timer", "reminder"]}},
            "additionalProperties": False},
        side_effects=True,
    )

    def __init__(self, book: ReminderBook, now: Now = local_now) -> None:
        self.book, self.now = book, now

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        kind: Kind | None = "timer" if arguments.get("kind") == "timer" else (
            "reminder" if arguments.get("kind") == "reminder" else None)
        pending = [r for r in self.book.pending() if kind is None or r.kind == kind]
        if isinstance(arguments.get("id"), int):
            pending = [r for r in pending if r.id == arguments["id"]]
        elif str(arguments.get("label") or "").strip():
            pending = matching(pending, str(arguments["label"]))
        if not pending:
            return ToolResult.failure("Nothing matches: nothing was cancelled.",
                                      phrases.nothing_to_cancel(language))
        if len(pending) > 1:
            now = self.now()
            return ToolResult.failure("Several match; ask which (or pass its id):\n"
                                      + describe(pending, now),
                                      phrases.which_one(pending, now, language))
        target = pending[0]
        if not self.book.cancel(target.id):
            return ToolResult.failure("It had already rung.", phrases.nothing_to_cancel(language))
        return _kept(self.book, f"{target.kind} {target.id} cancelled.",
                     phrases.cancelled(target, language), language)
