"""Asking before a tool changes something: a user's tool that changes things is not run
on the model's first call; the model is told to ask, the window is told of the question,
and the user's plain yes (it runs on the model's next call), "always" (it never asks
again), no (answered at once) or a click settles it. A built-in never asks. What a
talked-over turn's tools had already done is said afterwards; a turn the user went on
through before hearing it takes its timers back and says nothing."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

import pytest

from app.core.events import TurnCancelled, TurnCommitted, TurnConfirmed
from app.core.turn_commands import REOPENED
from app.storage.reminders import ReminderStore
from app.storage.tool_desk import ToolDesk
from app.tools.confirmation import STALE_AFTER_S, Answer, PendingCall, Permissions, answer_to
from app.tools.spec import ToolCall, ToolRegistry, ToolResult, ToolSpec
from tests.tools.conftest import Clock


class Calendar:
    """A real little tool with a side effect: it keeps the events it is asked to add."""

    spec = ToolSpec("calendar__add_event", "Adds an event to the user's calendar.",
                    {"type": "object", "properties": {"title": {"type": "string"}},
                     "required": ["title"]}, side_effects=True)

    def __init__(self) -> None:
        self.events: list[str] = []

    def run(self, arguments: Mapping[str, object], cancel: threading.Event,
            language: str = "en") -> ToolResult:
        self.events.append(str(arguments["title"]))
        return ToolResult(f"added {arguments['title']}", f"{arguments['title']} is in your "
                          "calendar.")


class AskFor:
    """The user's settings: which tools ask first, and what they always allow."""

    def __init__(self, *names: str) -> None:
        self.asking, self.always = set(names), set[str]()

    def needs_confirmation(self, tool_name: str) -> bool:
        return tool_name in self.asking and tool_name not in self.always

    def allow_always(self, tool_name: str) -> None:
        self.always.add(tool_name)


@pytest.mark.parametrize(("said", "language", "answer"), [
    ("Yes.", "en", Answer.YES), ("Sure, go ahead!", "en", Answer.YES),
    ("yeah please", "en", Answer.YES), ("Yes, always.", "en", Answer.ALWAYS),
    ("Don't ask me again", "en", Answer.ALWAYS), ("No thanks.", "en", Answer.NO),
    ("Nope.", "en", Answer.NO), ("What time is it?", "en", None),
    ("Yes, and set a timer for five minutes while you're at it.", "en", None),
    ("はい、お願い。", "ja", Answer.YES), ("いや、やめて。", "ja", Answer.NO),
    ("うん、毎回聞かなくていいよ", "ja", Answer.ALWAYS), ("明日の天気は?", "ja", None),
    ("好的。", "zh", Answer.YES), ("不用了。", "zh", Answer.NO),
    ("好，以后都不用再问", "zh", Answer.ALWAYS), ("今天星期几？", "zh", None),
])
def test_plain_answers_in_three_languages(said: str, language: str,
                                          answer: Answer | None) -> None:
    assert answer_to(said, language) is answer


def _desk(registry: ToolRegistry, reminders: ReminderStore, clock: Clock,
          confirms: AskFor) -> tuple[ToolDesk, Calendar, list[str], list[PendingCall]]:
    desk = ToolDesk(registry, reminders, clock)
    calendar = Calendar()
    desk.set_extra_tools([calendar], confirms)
    said: list[str] = []
    desk._say = said.append  # what start() hands it: the pipeline's first words
    asked: list[PendingCall] = []
    desk.on_question = asked.append
    return desk, calendar, said, asked


def test_a_yes_lets_the_model_make_the_call_and_a_no_drops_it(
        registry: ToolRegistry, reminders: ReminderStore, clock: Clock) -> None:
    desk, calendar, _, asked = _desk(registry, reminders, clock, AskFor(Calendar.spec.name))
    desk.observe(TurnConfirmed(1, 0.5, 0.0, 0.4))
    call = ToolCall(Calendar.spec.name, {"title": "Dentist"}, turn_id=1)
    first = desk.run_call(call, threading.Event())
    assert not first.ok and "NOT run yet" in first.text and "Ask them" in first.text
    assert calendar.events == [] and [p.call for p in asked] == [call]
    assert desk.reply(2, "Yes please.", "en") is None  # the model answers the yes
    assert desk.run_call(call, threading.Event()).ok
    assert calendar.events == ["Dentist"]
    assert not desk.run_call(call, threading.Event()).ok  # one yes, one call
    assert desk.reply(3, "No.", "en") == "Okay, I won't."
    assert desk.reply(4, "Yes.", "en") is None
    assert calendar.events == ["Dentist"]  # the no dropped it; the later yes has nothing


def test_always_allow_by_voice_and_by_click(
        registry: ToolRegistry, reminders: ReminderStore, clock: Clock) -> None:
    confirms = AskFor(Calendar.spec.name)
    desk, calendar, said, asked = _desk(registry, reminders, clock, confirms)
    desk.run_call(ToolCall(Calendar.spec.name, {"title": "Gym"}), threading.Event())
    assert desk.reply(1, "Yes, always.", "en") is None
    assert confirms.always == {Calendar.spec.name}
    assert desk.run_call(ToolCall(Calendar.spec.name, {"title": "Gym"}), threading.Event()).ok
    assert desk.run_call(ToolCall(Calendar.spec.name, {"title": "Yoga"}), threading.Event()).ok
    assert calendar.events == ["Gym", "Yoga"]

    confirms.always.clear()
    desk.run_call(ToolCall(Calendar.spec.name, {"title": "Party"}, language="ja"),
                  threading.Event())
    assert desk.allow(asked[-1].call.call_id, always=True)
    deadline = time.monotonic() + 5
    while not said and time.monotonic() < deadline:
        time.sleep(0.01)
    assert calendar.events[-1] == "Party" and said == ["Party is in your calendar."]
    assert confirms.always == {Calendar.spec.name}
    assert not desk.allow(asked[-1].call.call_id)  # settled: nothing waits


def test_a_question_goes_stale_and_the_window_can_decline(
        registry: ToolRegistry, reminders: ReminderStore, clock: Clock) -> None:
    desk, calendar, _, _ = _desk(registry, reminders, clock, AskFor(Calendar.spec.name))
    now = [1000.0]
    desk.permissions = Permissions(desk.permissions.confirms, clock=lambda: now[0])
    desk.run_call(ToolCall(Calendar.spec.name, {"title": "Dentist"}), threading.Event())
    now[0] += STALE_AFTER_S + 1
    assert desk.reply(1, "Yes.", "en") is None
    assert not desk.run_call(ToolCall(Calendar.spec.name, {"title": "Dentist"}),
                             threading.Event()).ok  # the old yes did not count
    desk.deny(desk.permissions.pending.call.call_id)  # type: ignore[union-attr]
    assert desk.permissions.pending is None and calendar.events == []


def test_built_in_tools_never_ask(registry: ToolRegistry, reminders: ReminderStore,
                                  clock: Clock) -> None:
    desk, _, _, asked = _desk(registry, reminders, clock, AskFor("set_timer"))
    result = desk.run_call(ToolCall("set_timer", {"seconds": 60}), threading.Event())
    assert result.ok and asked == [] and len(reminders.pending()) == 1


def test_a_talked_over_turn_says_what_its_tools_had_done(
        registry: ToolRegistry, reminders: ReminderStore, clock: Clock) -> None:
    desk, _, said, _ = _desk(registry, reminders, clock, AskFor())
    desk.observe(TurnConfirmed(5, 0.5, 0.0, 0.4))
    desk.run_call(ToolCall(Calendar.spec.name, {"title": "Dentist"}, turn_id=5),
                  threading.Event())
    desk.run_call(ToolCall("set_timer", {"seconds": 120}, turn_id=5), threading.Event())
    desk.observe(TurnCancelled(5, 1.0, "barge-in"))
    [line] = said
    assert line.startswith("Just so you know, that was already done before you stopped me.")
    assert "Dentist is in your calendar." in line and "two minutes" in line
    assert len(reminders.pending()) == 1  # talked over: the timer stays

    desk.run_call(ToolCall("set_timer", {"seconds": 60}, turn_id=6), threading.Event())
    desk.observe(TurnCommitted(6, "set a timer", "Timer set.", "k"))
    desk.run_call(ToolCall("set_timer", {"seconds": 30}, turn_id=7), threading.Event())
    desk.observe(TurnCancelled(7, 2.0, REOPENED))  # never heard: the request stays open
    assert said == [line]
    assert sorted(r.duration_s or 0 for r in reminders.pending()) == [60.0, 120.0]


def test_a_speculative_reply_does_not_act_until_its_turn_is_confirmed(
        registry: ToolRegistry, reminders: ReminderStore, clock: Clock) -> None:
    desk, calendar, _, _ = _desk(registry, reminders, clock, AskFor())
    cancel = threading.Event()
    results: list[ToolResult] = []
    call = ToolCall(Calendar.spec.name, {"title": "Dentist"}, turn_id=8)
    waiting = threading.Thread(target=lambda: results.append(desk.run_call(call, cancel)))
    waiting.start()
    time.sleep(0.3)
    assert calendar.events == [] and not results  # the user may still go on speaking
    desk.observe(TurnConfirmed(8, 1.0, 0.0, 0.9))
    waiting.join(2)
    assert results[0].ok and calendar.events == ["Dentist"]

    cancel = threading.Event()
    call = ToolCall(Calendar.spec.name, {"title": "Gym"}, turn_id=9)
    waiting = threading.Thread(target=lambda: results.append(desk.run_call(call, cancel)))
    waiting.start()
    time.sleep(0.2)
    cancel.set()  # the user went on: the turn was dropped
    waiting.join(2)
    assert not results[1].ok and "went on speaking" in results[1].text
    assert calendar.events == ["Dentist"]
