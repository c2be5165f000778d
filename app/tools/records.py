"""What the timer and note tools keep, and the two small ports they keep it through.

``app.storage.reminders.ReminderStore`` and ``app.storage.notes.NoteStore`` implement the
ports in the app's SQLite database; the tools see only these Protocols.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Kind = Literal["timer", "reminder"]
State = Literal["pending", "fired", "cancelled"]


@dataclass(frozen=True)
class Reminder:
    """A timer ("five minutes") or a reminder ("at six, call mum")."""

    id: int
    kind: Kind
    label: str
    """A timer's name ("pasta", or ""), a reminder's errand ("call mum")."""
    due_at: float
    """When it rings, seconds since the epoch (UTC)."""
    created_at: float
    duration_s: float | None = None
    """A timer's length, for "your five minute timer is done"."""
    language: str = "en"
    """The language it was asked for in: the one it is announced in."""
    state: State = "pending"


@dataclass(frozen=True)
class Note:
    id: int
    text: str
    created_at: float


class ReminderBook(Protocol):
    def add(self, kind: Kind, label: str, due_at: float, *, created_at: float,
            duration_s: float | None = None, language: str = "en") -> Reminder: ...

    @property
    def unsaved(self) -> bool:
        """Something is kept only in memory: the disk refused it (it is retried)."""
        ...

    def pending(self) -> list[Reminder]:
        """Soonest first."""
        ...

    def cancel(self, reminder_id: int) -> bool:
        """False when it was not pending (already fired, cancelled, or never there)."""
        ...

    def due(self, now: float) -> list[Reminder]:
        """Pending ones due at ``now`` or before, soonest first."""
        ...

    def mark_fired(self, reminder_id: int) -> None: ...


class NoteBook(Protocol):
    @property
    def unsaved(self) -> bool:
        """Something is kept only in memory: the disk refused it (it is retried)."""
        ...

    def add(self, text: str, *, created_at: float) -> Note: ...

    def search(self, query: str, limit: int = 3) -> Sequence[Note]:
        """Best first; [] when nothing matches."""
        ...
