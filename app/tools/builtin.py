"""The built-in tools, ready for a ``ToolRegistry``. Nothing here reaches the network or
the user's files: they keep what they keep in the app's own database."""

from __future__ import annotations

from app.tools.calculator import Calculator
from app.tools.clock import Clock, Now, local_now
from app.tools.notes import AddNote, SearchNotes
from app.tools.records import NoteBook, ReminderBook
from app.tools.spec import Tool, ToolRegistry
from app.tools.timers import CancelTimer, ListTimers, SetReminder, SetTimer


def builtin_tools(reminders: ReminderBook, notes: NoteBook, now: Now = local_now) -> list[Tool]:
    return [Clock(now), SetTimer(reminders, now), SetReminder(reminders, now),
            ListTimers(reminders, now), CancelTimer(reminders, now), AddNote(notes, now),
            SearchNotes(notes), Calculator()]


def builtin_registry(reminders: ReminderBook, notes: NoteBook,
                     now: Now = local_now) -> ToolRegistry:
    return ToolRegistry(builtin_tools(reminders, notes, now))
