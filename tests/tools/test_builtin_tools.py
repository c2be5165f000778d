"""The built-in tools through the registry, on real stores, and what they say in English,
Japanese and Mandarin."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from app.storage.reminders import ReminderStore
from app.tools import phrases
from app.tools.spec import ToolCall, ToolRegistry
from tests.tools.conftest import NOW, TOKYO, Clock


def _run(registry: ToolRegistry, name: str, language: str = "en",
         **arguments: object) -> tuple[bool, str, str]:
    result = registry.run(ToolCall(name, arguments, language=language))
    return result.ok, result.text, result.spoken


@pytest.mark.parametrize(("language", "time", "date"), [
    ("en", "It's three oh five in the afternoon.", "Today is Tuesday, 12 March 2024."),
    ("ja", "今、午後三時五分です。", "今日は三月十二日、火曜日です。"),
    ("zh", "现在是下午三点零五分。", "今天是三月十二日，星期二。"),
])
def test_the_time_and_date_in_the_users_zone(registry: ToolRegistry, language: str,
                                             time: str, date: str) -> None:
    ok, text, spoken = _run(registry, "current_time", language)
    assert ok and spoken == time and text == "2024-03-12 15:05, Tuesday (JST)"
    assert _run(registry, "current_time", language, what="date")[2] == date


@pytest.mark.parametrize(("language", "seconds", "set_", "done"), [
    ("en", 300, "Timer set for five minutes.", "Your five minute timer is done."),
    ("en", 150, "Timer set for two and a half minutes.",
     "Your timer for two and a half minutes is done."),
    ("ja", 300, "五分のタイマーをセットしました。", "五分のタイマーが終わりました。"),
    ("zh", 300, "好的，五分钟的计时器已设置。", "五分钟的计时器时间到了。"),
])
def test_a_timer_is_confirmed_and_rings_when_due(
        registry: ToolRegistry, reminders: ReminderStore, language: str, seconds: int,
        set_: str, done: str) -> None:
    ok, _, spoken = _run(registry, "set_timer", language, seconds=seconds)
    assert ok and spoken == set_
    assert reminders.due(NOW.timestamp() + seconds - 1) == []
    (due,) = reminders.due(NOW.timestamp() + seconds)
    assert phrases.fired(due, datetime.fromtimestamp(due.due_at, TOKYO)) == done


@pytest.mark.parametrize(("language", "text", "set_", "done"), [
    ("en", "call mum", "OK, I'll remind you at six o'clock in the evening to call mum.",
     "It's six o'clock: time to call mum."),
    ("ja", "お母さんに電話する", "午後六時に「お母さんに電話する」とお知らせします。",
     "六時です。お母さんに電話する時間です。"),
    ("zh", "给妈妈打电话", "好的，我会在晚上六点提醒你给妈妈打电话。",
     "六点了，该给妈妈打电话了。"),
])
def test_a_reminder_at_a_time_of_day(registry: ToolRegistry, reminders: ReminderStore,
                                     language: str, text: str, set_: str, done: str) -> None:
    ok, model_text, spoken = _run(registry, "set_reminder", language, text=text, at="18:00")
    assert ok and spoken == set_ and "2024-03-12 18:00" in model_text
    (due,) = reminders.due(datetime(2024, 3, 12, 18, 0, tzinfo=TOKYO).timestamp())
    assert phrases.fired(due, datetime.fromtimestamp(due.due_at, TOKYO)) == done


def test_reminder_times_dates_and_minutes(registry: ToolRegistry,
                                          reminders: ReminderStore) -> None:
    assert _run(registry, "set_reminder", text="lock up", at="09:00")[2] == (
        "OK, I'll remind you tomorrow at nine o'clock in the morning to lock up.")
    assert _run(registry, "set_reminder", text="water plants", at="10:00",
                date="2024-03-15")[2] == (
        "OK, I'll remind you on Friday at ten o'clock in the morning to water plants.")
    assert _run(registry, "set_reminder", text="check the oven", in_minutes=20)[0]
    due = [r.due_at - NOW.timestamp() for r in reminders.pending()]
    assert due == [1200.0, (17 * 3600 + 55 * 60), (3 * 86400 - 5 * 3600 - 5 * 60)]
    for bad in ({"at": "25:00"}, {"at": "09:00", "date": "2024-03-01"},
                {"at": "09:00", "date": "soon"}, {}):
        ok, text, _ = _run(registry, "set_reminder", text="x", **bad)
        assert not ok and text.startswith("set_reminder:"), bad


def test_listing_and_cancelling_by_id_by_words_or_the_only_one(
        registry: ToolRegistry, reminders: ReminderStore, clock: Clock) -> None:
    assert _run(registry, "list_timers")[2] == "You have no timers or reminders."
    assert _run(registry, "cancel_timer", kind="timer")[2] == "There's nothing to cancel."
    _run(registry, "set_timer", seconds=600, label="pasta")
    _run(registry, "set_reminder", text="call the bank", at="18:00")
    clock.at = NOW + timedelta(seconds=30)
    ok, text, spoken = _run(registry, "list_timers")
    assert spoken == ("You have two: a pasta timer with ten minutes left and a reminder at "
                      "six o'clock in the evening to call the bank.")
    assert "timer 1: pasta" in text and "reminder 2: call the bank" in text
    assert _run(registry, "list_timers", "ja")[2] == (
        "二件あります：残り十分のpastaタイマー、午後六時のリマインダー（call the bank）。")
    ok, _, spoken = _run(registry, "cancel_timer")
    assert not ok and spoken.endswith("Which one should I cancel?")
    assert _run(registry, "cancel_timer", label="the bank")[2] == (
        "Reminder to call the bank cancelled.")
    assert _run(registry, "cancel_timer", kind="timer", language="zh")[2] == "计时器已取消。"
    assert reminders.pending() == []
    _run(registry, "set_timer", seconds=60)
    (only,) = reminders.pending()
    assert _run(registry, "cancel_timer", id=only.id + 100)[0] is False
    assert _run(registry, "cancel_timer", id=only.id)[2] == "Timer cancelled."


def test_notes_are_kept_and_found(registry: ToolRegistry) -> None:
    assert _run(registry, "add_note", text="the wifi password is on the fridge")[2] == "Noted."
    assert _run(registry, "search_notes", query="wifi")[2] == (
        "You noted: the wifi password is on the fridge.")
    assert _run(registry, "search_notes", "ja", query="火山")[2] == (
        "それについてのメモはありません。")


def test_every_builtin_is_declared_once_and_nothing_reaches_out(
        registry: ToolRegistry) -> None:
    specs = {s.name: s for s in registry.specs}
    assert set(specs) == {"current_time", "set_timer", "set_reminder", "list_timers",
                          "cancel_timer", "add_note", "search_notes", "calculate"}
    assert {n for n, s in specs.items() if s.side_effects} == {
        "set_timer", "set_reminder", "cancel_timer", "add_note"}


@pytest.mark.parametrize(("seconds", "en", "ja", "zh"), [
    (1, "one second", "一秒", "一秒"), (60, "one minute", "一分", "一分钟"),
    (90, "one and a half minutes", "一分半", "一分半钟"),
    (3600 + 300, "one hour and five minutes", "一時間五分", "一小时五分钟"),
    (125, "two minutes and five seconds", "二分五秒", "两分五秒"),
])
def test_durations_are_said_as_words(seconds: int, en: str, ja: str, zh: str) -> None:
    assert [phrases.duration(seconds, x) for x in ("en", "ja", "zh")] == [en, ja, zh]
