"""How the window writes a timer or reminder: what it is and when it rings, in the user's
local time. A timer counts down ("in 4 min 12 s"); a reminder names its time of day
("today 18:00", "tomorrow 09:00", "Friday 07:30", "3 Apr 09:00").
"""

from __future__ import annotations

import math
from datetime import datetime

from app.tools.records import Reminder

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
"""English whatever the system locale: the rest of the window is English."""


def span(seconds: float) -> str:
    """A length, short: "45 s", "4 min 12 s", "5 min", "1 h 05 min"."""
    total = max(0, math.ceil(seconds - 1e-6))  # "1 s" until it is due, never "0 s" early
    h, m, s = total // 3600, total // 60 % 60, total % 60
    if h:
        return f"{h} h {m:02d} min" if m else f"{h} h"
    if m:
        return f"{m} min {s} s" if s else f"{m} min"
    return f"{s} s"


def countdown(due_at: float, now: float) -> str:
    """A timer's time left: "in 4 min 12 s"; "now" once due (it rings within a second)."""
    left = due_at - now
    return "now" if left <= 0 else f"in {span(left)}"


def time_of_day(due: datetime, now: datetime) -> str:
    """A reminder's moment in ``now``'s zone: "today 18:00", "tomorrow 09:00", "Friday
    07:30" within a week, else "3 Apr 09:00" (with the year when it is not this one)."""
    due = due.astimezone(now.tzinfo)
    days = (due.date() - now.date()).days
    clock = f"{due:%H:%M}"
    if days <= 0:
        return f"today {clock}"
    if days == 1:
        return f"tomorrow {clock}"
    if days < 7:
        return f"{_WEEKDAYS[due.weekday()]} {clock}"
    year = f" {due.year}" if due.year != now.year else ""
    return f"{due.day} {_MONTHS[due.month - 1]}{year} {clock}"


def when(reminder: Reminder, now: datetime) -> str:
    """When it rings, as the list shows it."""
    if reminder.kind == "timer":
        return countdown(reminder.due_at, now.timestamp())
    return time_of_day(datetime.fromtimestamp(reminder.due_at, now.tzinfo), now)


def title(reminder: Reminder) -> str:
    """What it is: "pasta (5 min)", "5 min timer", "call mum"."""
    if reminder.kind == "reminder":
        return reminder.label or "Reminder"
    length = span(reminder.duration_s) if reminder.duration_s else ""
    if reminder.label:
        return f"{reminder.label} ({length})" if length else reminder.label
    return f"{length} timer" if length else "Timer"


def kind_word(reminder: Reminder) -> str:
    return "Timer" if reminder.kind == "timer" else "Reminder"
