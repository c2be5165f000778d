"""View → Timers and reminders: what is still to ring, soonest first, in the user's time,
refreshed every second while shown; Cancel; and a ring shown in the window, muted or not."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from app.core.pipeline import VoicePipeline
from app.core.telemetry import EngineNotice
from app.storage.database import open_database
from app.storage.history import Database
from app.storage.notes import NoteStore
from app.storage.reminders import ReminderStore
from app.storage.tool_desk import Rang, ToolDesk, attach_tools
from app.tools.builtin import builtin_registry
from app.tools.records import Reminder
from app.ui import timer_text
from app.ui.help_menu import shortcut_lines
from app.ui.theme import apply_theme
from app.ui.timers_dialog import EMPTY_TEXT, TimersDialog
from app.ui.window import MainWindow

SHOTS = Path(__file__).parent / "screenshots"
PARIS = timezone(timedelta(hours=2), "CEST")
NOW = datetime(2024, 6, 14, 15, 5, 0, tzinfo=PARIS)
"""A Friday afternoon, 15:05 in the user's zone."""


class Clock:
    def __init__(self, at: datetime = NOW) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    opened = open_database(tmp_path / "hanasu.db")
    database = Database(opened.path)
    yield database
    database.close()


@pytest.fixture
def store(db: Database) -> ReminderStore:
    return ReminderStore(db)


def _dialog(qtbot: QtBot, qapp: object, source: object, clock: Clock | None = None,
            show: bool = True) -> TimersDialog:
    apply_theme(qapp)  # type: ignore[arg-type]
    dialog = TimersDialog(lambda: source, now=clock or Clock())  # type: ignore[arg-type,return-value]
    qtbot.addWidget(dialog)
    if show:
        dialog.show()
        qtbot.waitExposed(dialog)
    return dialog


def _fill(store: ReminderStore, start: float) -> tuple[Reminder, Reminder, Reminder, Reminder]:
    call = store.add("reminder", "call mum", NOW.replace(hour=18, minute=0).timestamp(),
                     created_at=start)
    pasta = store.add("timer", "pasta", start + 252, created_at=start, duration_s=300)
    tea = store.add("timer", "", start + 45, created_at=start, duration_s=60)
    dentist = store.add("reminder", "go to the dentist",
                        (NOW + timedelta(days=1)).replace(hour=9, minute=0).timestamp(),
                        created_at=start)
    return call, pasta, tea, dentist


def test_the_list_is_soonest_first_in_local_time(qtbot: QtBot, qapp: object,
                                                 store: ReminderStore) -> None:
    start = NOW.timestamp()
    _fill(store, start)
    dialog = _dialog(qtbot, qapp, store)
    assert dialog.texts() == [
        ("Timer", "1 min timer", "in 45 s"),
        ("Timer", "pasta (5 min)", "in 4 min 12 s"),
        ("Reminder", "call mum", "today 18:00"),
        ("Reminder", "go to the dentist", "tomorrow 09:00"),
    ]
    assert not dialog.empty.isVisible()
    assert not dialog.status.isVisible()
    assert dialog.rows[1].when.toolTip() == "Rings at 15:09:12, Fri 14 Jun"
    assert dialog.rows[1].cancel.accessibleName() == "Cancel the timer pasta (5 min)"


def test_cancel_removes_it_from_the_store_and_the_list(qtbot: QtBot, qapp: object,
                                                       store: ReminderStore) -> None:
    start = NOW.timestamp()
    call, pasta, tea, dentist = _fill(store, start)
    dialog = _dialog(qtbot, qapp, store)
    dialog.rows[1].cancel.click()  # pasta
    assert [r.id for r in store.pending()] == [tea.id, call.id, dentist.id]
    assert store.get(pasta.id) is not None and store.get(pasta.id).state == "cancelled"  # type: ignore[union-attr]
    assert [text[1] for text in dialog.texts()] == ["1 min timer", "call mum",
                                                    "go to the dentist"]
    for _ in range(3):
        dialog.rows[0].cancel.click()
    assert store.pending() == [] and dialog.rows == []
    assert dialog.empty.isVisible() and dialog.empty.text() == EMPTY_TEXT


def test_cancelling_one_that_already_rang_says_so(qtbot: QtBot, qapp: object,
                                                  store: ReminderStore) -> None:
    start = NOW.timestamp()
    tea = store.add("timer", "", start + 45, created_at=start, duration_s=60)
    dialog = _dialog(qtbot, qapp, store)
    store.mark_fired(tea.id)  # rang between two refreshes
    dialog.rows[0].cancel.click()
    assert dialog.rows == []
    assert dialog.status.isVisible()
    assert dialog.status.text() == "It had already rung or been cancelled."


def test_empty_state(qtbot: QtBot, qapp: object, store: ReminderStore) -> None:
    dialog = _dialog(qtbot, qapp, store)
    assert dialog.texts() == []
    assert dialog.empty.isVisible()
    assert dialog.empty.text().startswith("No timers or reminders. Say “set a timer for five")


def test_it_refreshes_every_second_only_while_shown(qtbot: QtBot, qapp: object,
                                                    store: ReminderStore) -> None:
    """A timer set by voice while the list is open appears; the countdown moves; one that
    rang goes; hidden, the refresh timer stops."""
    clock = Clock(datetime.now(PARIS))
    start = clock.at.timestamp()
    reminders = ReminderStore(store.db)  # the desk keeps its own store, as in the app
    desk = ToolDesk(builtin_registry(reminders, NoteStore(store.db)), reminders, clock)
    dialog = _dialog(qtbot, qapp, desk, clock)
    assert dialog.timer.isActive() and dialog.rows == []
    assert desk.reply(1, "Set a timer for five minutes", "en") == "Timer set for five minutes."
    qtbot.waitUntil(lambda: len(dialog.rows) == 1, timeout=3000)
    first = dialog.rows[0].when.text()
    assert first in ("in 5 min", "in 5 min 1 s"), first  # set a moment after ``start``
    clock.at += timedelta(seconds=20)
    qtbot.waitUntil(lambda: dialog.rows[0].when.text() != first, timeout=3000)
    assert dialog.rows[0].when.text() in ("in 4 min 40 s", "in 4 min 41 s")
    said: list[str] = []
    assert desk.ring_due(said.append, start + 301) == 1
    qtbot.waitUntil(lambda: dialog.rows == [], timeout=3000)
    assert said == ["Your five minute timer is done."]
    assert dialog.empty.isVisible()
    dialog.hide()
    assert not dialog.timer.isActive()


def test_a_database_error_is_one_line_not_a_crash(qtbot: QtBot, qapp: object,
                                                  store: ReminderStore) -> None:
    start = NOW.timestamp()
    store.add("timer", "pasta", start + 252, created_at=start, duration_s=300)

    class Broken:
        fail = False

        def pending(self) -> list[Reminder]:
            if self.fail:
                raise sqlite3.OperationalError("database is locked")
            return store.pending()

        def cancel(self, reminder_id: int) -> bool:
            raise sqlite3.OperationalError("disk I/O error")

    source = Broken()
    dialog = _dialog(qtbot, qapp, source)
    source.fail = True
    dialog.refresh()
    assert dialog.status.isVisible()
    assert dialog.status.text() == ("Could not read the timers: the conversation database is "
                                    "locked by another program (is another Hanasu running?).")
    assert len(dialog.rows) == 1  # what was read last stays listed
    dialog.rows[0].cancel.click()
    assert dialog.status.text().startswith("Could not cancel it: the disk reported an error")
    assert "\n" not in dialog.status.text()


def test_times_as_written() -> None:
    assert timer_text.span(0.2) == "1 s"
    assert timer_text.span(60) == "1 min"
    assert timer_text.span(3600 + 5 * 60 + 3) == "1 h 05 min"
    assert timer_text.countdown(100.0, 100.0) == "now"
    assert timer_text.time_of_day(NOW + timedelta(days=3), NOW) == "Monday 15:05"
    assert timer_text.time_of_day(NOW + timedelta(days=30), NOW) == "14 Jul 15:05"
    assert timer_text.time_of_day(NOW + timedelta(days=365), NOW) == "14 Jun 2025 15:05"
    utc = NOW.astimezone(UTC)  # stored in UTC, shown in the user's zone
    assert timer_text.time_of_day(utc.replace(hour=22, minute=30), NOW) == "tomorrow 00:30"


# ---- the window ------------------------------------------------------------------------


def test_view_menu_opens_the_list_and_ctrl_t_is_listed(qtbot: QtBot, window: MainWindow,
                                                       store: ReminderStore) -> None:
    start = time.time()
    store.add("timer", "pasta", start + 252, created_at=start, duration_s=300)
    window.timers.desk = lambda: store
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert window.timers.action in view.actions()  # type: ignore[union-attr]
    assert any(line.endswith("\tTimers and reminders") for line in shortcut_lines(window))
    window.timers.action.trigger()
    dialog = window.timers.dialog
    assert dialog is not None and dialog.isVisible()
    assert [text[1] for text in dialog.texts()] == ["pasta (5 min)"]
    window.timers.action.trigger()  # again: the same list, raised
    assert window.timers.dialog is dialog


def test_without_a_database_the_list_says_so(qtbot: QtBot, window: MainWindow) -> None:
    dialog = window.timers.open()
    assert dialog.rows == []
    assert dialog.status.text().startswith("Timers are not kept in this session")


def _ring(label: str, due_at: float) -> Rang:
    reminder = Reminder(1, "timer", label, due_at, due_at - 300, 300.0)
    return Rang(reminder, f"Your {label} timer is done.")


def test_each_ring_is_a_notice_and_its_muted_copy_is_not_added_twice(
        qtbot: QtBot, window: MainWindow) -> None:
    due = time.time()
    clock = datetime.fromtimestamp(due).astimezone().strftime("%H:%M")
    window.bridge.post(_ring("pasta", due))
    window.bridge.post(EngineNotice("Your pasta timer is done.", 0.0))  # what muted says
    window.bridge.post(_ring("pasta", due))  # a second pasta timer, same minute
    with qtbot.waitSignal(window.bridge.any_event, timeout=2000,
                          check_params_cb=lambda e: isinstance(e, EngineNotice)):
        window.bridge.post(EngineNotice("Your pasta timer is done.", 0.0))
    assert window.notices.messages == [f"{clock} Your pasta timer is done."] * 2
    window.bridge.post(EngineNotice("Kokoro failed; eSpeak speaks Japanese.", 0.0))
    qtbot.waitUntil(lambda: len(window.notices.messages) == 3, timeout=2000)


def test_an_announcement_while_muted_shows_in_the_notices(
        qtbot: QtBot, window: MainWindow, pipeline: VoicePipeline) -> None:
    window.set_muted(True)
    pipeline.announce("It's six: time to call mum.")
    qtbot.waitUntil(lambda: "It's six: time to call mum." in window.notices.messages,
                    timeout=5000)
    assert window.notices.button.isVisible()


def test_a_timer_that_rings_while_muted_shows_once_in_the_window(
        qtbot: QtBot, window: MainWindow, pipeline: VoicePipeline, db: Database) -> None:
    """The app's wiring: the desk rings a due timer, the window shows it with its time,
    and the muted pipeline's copy of the same line is not a second notice."""
    window.set_muted(True)
    store = ReminderStore(db)
    due = time.time() - 1
    store.add("timer", "tea", due, created_at=due - 60, duration_s=60)
    desk = attach_tools(pipeline, db, on_ring=window.bridge.post)
    try:
        with qtbot.waitSignal(window.bridge.any_event, timeout=5000,
                              check_params_cb=lambda e: isinstance(e, EngineNotice)):
            pass
    finally:
        desk.stop()
    clock = datetime.fromtimestamp(due).astimezone().strftime("%H:%M")
    assert window.notices.messages == [f"{clock} Your tea timer is done."]
    assert store.pending() == []


def test_screenshot_two_timers_and_a_reminder(qtbot: QtBot, qapp: object,
                                              store: ReminderStore) -> None:
    start = NOW.timestamp()
    store.add("timer", "pasta", start + 252, created_at=start, duration_s=600)
    store.add("timer", "", start + 45, created_at=start, duration_s=60)
    store.add("reminder", "call mum", NOW.replace(hour=18, minute=0).timestamp(),
              created_at=start)
    dialog = _dialog(qtbot, qapp, store)
    dialog.resize(560, 330)
    qtbot.wait(50)
    assert len(dialog.rows) == 3
    folders = [SHOTS] + ([Path(os.environ["HANASU_SCREENS"])]
                         if os.environ.get("HANASU_SCREENS") else [])
    image = dialog.grab().toImage()
    for folder in folders:
        folder.mkdir(exist_ok=True)
        suffix = "" if folder != SHOTS else f"-{QGuiApplication.platformName()}"
        assert image.save(str(folder / f"timers{suffix}.png"))
