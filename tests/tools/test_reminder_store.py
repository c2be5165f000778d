"""Timers, reminders and notes in the database: they survive a restart, come due in order,
and a full disk loses none of them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.storage.database import SCHEMA_VERSION, open_database, schema_version
from app.storage.history import Database
from app.storage.notes import NoteStore
from app.storage.reminders import ReminderStore


def _open(path: Path) -> Database:
    opened = open_database(path)
    assert opened.path == path and opened.notice == ""
    return Database(opened.path)


def test_reminders_and_notes_survive_a_restart(tmp_path: Path) -> None:
    db = _open(tmp_path / "hanasu.db")
    store = ReminderStore(db)
    timer = store.add("timer", "pasta", 1300.0, created_at=1000.0, duration_s=300.0)
    store.add("reminder", "call mum", 5000.0, created_at=1000.0, language="ja")
    gone = store.add("timer", "", 2000.0, created_at=1000.0, duration_s=1000.0)
    assert store.cancel(gone.id)
    NoteStore(db).add("the wifi password is on the fridge", created_at=1000.0)
    db.close()
    again = _open(tmp_path / "hanasu.db")
    pending = ReminderStore(again).pending()
    assert [(r.id, r.kind, r.label, r.due_at, r.duration_s, r.language) for r in pending] == [
        (timer.id, "timer", "pasta", 1300.0, 300.0, "en"),
        (timer.id + 1, "reminder", "call mum", 5000.0, None, "ja")]
    assert [n.text for n in NoteStore(again).search("wifi")] == [
        "the wifi password is on the fridge"]
    with again.read() as conn:
        assert schema_version(conn) == SCHEMA_VERSION


def test_due_is_soonest_first_and_a_fired_one_does_not_ring_again(
        reminders: ReminderStore) -> None:
    late = reminders.add("reminder", "b", 300.0, created_at=0.0)
    soon = reminders.add("timer", "a", 100.0, created_at=0.0, duration_s=100.0)
    future = reminders.add("timer", "c", 900.0, created_at=0.0, duration_s=900.0)
    assert reminders.due(50.0) == []
    assert [r.id for r in reminders.due(300.0)] == [soon.id, late.id]
    reminders.mark_fired(soon.id)
    assert [r.id for r in reminders.due(300.0)] == [late.id]
    assert not reminders.cancel(soon.id)  # already rang
    assert [r.id for r in reminders.pending()] == [late.id, future.id]
    fired = reminders.get(soon.id)
    assert fired is not None and fired.state == "fired"


def test_cancel_takes_only_a_pending_one(reminders: ReminderStore) -> None:
    timer = reminders.add("timer", "", 100.0, created_at=0.0, duration_s=100.0)
    assert reminders.cancel(timer.id)
    assert not reminders.cancel(timer.id) and not reminders.cancel(999)
    assert reminders.pending() == []


def _fill_disk(db: Database) -> None:
    """SQLite's own "database or disk is full": no page may be added."""
    with db.read() as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")


def _free_disk(db: Database) -> None:
    with db.read() as conn:
        conn.execute("PRAGMA max_page_count = 1073741823")


def test_a_full_disk_loses_no_timer_and_the_user_is_told_once(tmp_path: Path) -> None:
    notices: list[str] = []
    opened = open_database(tmp_path / "hanasu.db")
    db = Database(opened.path, notices.append)
    store = ReminderStore(db)
    kept = store.add("timer", "", 100.0, created_at=0.0, duration_s=100.0)
    _fill_disk(db)
    padding = "x" * 250
    added = [store.add("reminder", f"errand {i} {padding}", 200.0 + i, created_at=0.0)
             for i in range(30)]
    assert store.unsaved and len(notices) == 1 and "disk is full" in notices[0]
    assert all(r.id < 0 for r in added[-5:])
    assert [r.due_at for r in store.due(205.0)] == [100.0, *[200.0 + i for i in range(6)]]
    store.mark_fired(kept.id)
    assert store.cancel(added[-1].id)
    assert len(store.pending()) == 29
    _free_disk(db)
    store.add("timer", "after", 9999.0, created_at=0.0, duration_s=1.0)
    assert not store.unsaved
    db.close()
    again = ReminderStore(Database(opened.path))
    assert [r.label for r in again.pending()] == [
        *(f"errand {i} {padding}" for i in range(29)), "after"]
    raw = sqlite3.connect(tmp_path / "hanasu.db")
    assert raw.execute("SELECT state FROM reminders WHERE id = ?", (kept.id,)).fetchone() == (
        "fired",)


def test_notes_refused_by_a_full_disk_are_still_found_and_written_later(
        tmp_path: Path) -> None:
    opened = open_database(tmp_path / "hanasu.db")
    db = Database(opened.path)
    notes = NoteStore(db)
    _fill_disk(db)
    for i in range(30):
        notes.add(f"note {i}: the spare key is under the blue pot " + "y" * 300,
                  created_at=float(i))
    assert notes.unsaved
    assert notes.search("spare key")
    _free_disk(db)
    notes.add("the bins go out on Thursday", created_at=99.0)
    assert not notes.unsaved
    db.close()
    assert len(NoteStore(Database(opened.path)).all()) == 31


def test_notes_are_found_by_their_words_in_any_of_the_three_languages(
        notes: NoteStore) -> None:
    notes.add("The wifi password is on the fridge", created_at=1.0)
    notes.add("WiFiのパスワードは冷蔵庫に貼ってある", created_at=2.0)
    notes.add("备用钥匙在蓝色花盆下面", created_at=3.0)
    notes.add("Mum's birthday is on the ninth of May", created_at=4.0)
    assert notes.search("what's the wifi password")[0].text == (
        "The wifi password is on the fridge")
    assert notes.search("冷蔵庫")[0].text == "WiFiのパスワードは冷蔵庫に貼ってある"
    assert notes.search("钥匙")[0].text == "备用钥匙在蓝色花盆下面"
    assert [n.text for n in notes.search("birthdays")] == [
        "Mum's birthday is on the ninth of May"]
    assert notes.search("the") == [] and notes.search("volcano") == []
