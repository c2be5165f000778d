"""The ``current_time`` tool: the time and date now, in the user's own time zone."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime

from app.tools import phrases
from app.tools.spec import Arguments, ToolResult, ToolSpec

Now = Callable[[], datetime]
"""The time now with its zone (tests pass a fixed one)."""


def local_now() -> datetime:
    return datetime.now().astimezone()


class Clock:
    spec = ToolSpec(
        name="current_time",
        description="The current local time, date and weekday.",
        parameters={"type": "object", "properties": {
            "what": {"type": "string", "enum": ["time", "date"],
                     "description": "What the user asked for (time if unsure)."}},
            "additionalProperties": False},
        side_effects=False,
    )

    def __init__(self, now: Now = local_now) -> None:
        self.now = now

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        now = self.now()
        zone = now.tzname() or now.strftime("UTC%z")
        text = f"{now:%Y-%m-%d %H:%M}, {now:%A} ({zone})"
        if arguments.get("what") == "date":
            return ToolResult(text, phrases.date_today(now, language))
        return ToolResult(text, phrases.time_now(now, language))
