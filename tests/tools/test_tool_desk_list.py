"""The desk's side of the window's list: pending soonest first, a cancel that the ticker
respects, and each ring handed to ``on_ring`` before it is said."""

from __future__ import annotations

from app.storage.reminders import ReminderStore
from app.storage.tool_desk import Rang, ToolDesk
from app.tools.spec import ToolRegistry
from tests.tools.conftest import NOW, Clock


def test_pending_cancel_and_rings_in_order(registry: ToolRegistry, reminders: ReminderStore,
                                           clock: Clock) -> None:
    order: list[str] = []
    rings: list[Rang] = []

    def on_ring(ring: Rang) -> None:
        rings.append(ring)
        order.append("shown")

    desk = ToolDesk(registry, reminders, clock, on_ring=on_ring)
    start = NOW.timestamp()
    pasta = reminders.add("timer", "pasta", start + 300, created_at=start, duration_s=300)
    mum = reminders.add("reminder", "call mum", start + 60, created_at=start)
    tea = reminders.add("timer", "", start + 120, created_at=start, duration_s=120)
    assert [r.id for r in desk.pending()] == [mum.id, tea.id, pasta.id]
    assert desk.cancel(tea.id)
    assert not desk.cancel(tea.id)  # already cancelled
    assert [r.id for r in desk.pending()] == [mum.id, pasta.id]

    def say(text: str) -> None:
        order.append("said")

    assert desk.ring_due(say, start + 301) == 2
    assert [r.reminder.id for r in rings] == [mum.id, pasta.id]
    assert rings[1].text == "Your pasta timer is done."
    assert order == ["shown", "said", "shown", "said"]  # the window hears first
    assert desk.pending() == []
