"""Saved conversations through the Keeper: resume, new, reopen, delete, forget, exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.events import TurnCommitted
from app.core.metrics import TurnTimeline
from app.storage.database import open_database
from app.storage.history import export_json, export_markdown
from app.storage.keeper import ConversationKey, Keeper


class _FakePipeline:
    """What Keeper.record reads from a pipeline: the turn's timeline."""

    def __init__(self) -> None:
        self.recorder = type("R", (), {"turns": {}})()


def _commit(keeper: Keeper, key: ConversationKey, turn_id: int, user: str, heard: str,
            interrupted: bool = False) -> None:
    pipeline = _FakePipeline()
    pipeline.recorder.turns[turn_id] = TurnTimeline(
        turn_id, speech_end=1.0, first_sample_played=1.6, interrupted=interrupted,
        prompt_tokens=120, reused_tokens=100, confirmed=True)
    keeper.observer(pipeline)(TurnCommitted(turn_id, user, heard, key))


def test_exchanges_are_kept_and_resumed_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "hanasu.db"
    keeper = Keeper(open_database(path))
    key, exchanges = keeper.resume("hana")
    assert exchanges == []
    _commit(keeper, key, 1, "Hi Hana", "Hello! How are you?")
    _commit(keeper, key, 2, "Tell me a story", "Once upon a time", interrupted=True)
    _commit(keeper, key, 3, "Nothing heard", "")  # merged into the next message instead
    keeper.close()

    again = Keeper(open_database(path))
    key2, exchanges = again.resume("hana")
    assert key2 == key
    assert [(e.user_text, e.heard_text, e.interrupted) for e in exchanges] == [
        ("Hi Hana", "Hello! How are you?", False),
        ("Tell me a story", "Once upon a time", True),
    ]
    assert exchanges[0].timings["voice_to_voice"] == 0.6000000000000001 or \
        abs(float(exchanges[0].timings["voice_to_voice"] or 0) - 0.6) < 1e-9
    assert exchanges[0].timings["reused_tokens"] == 100
    assert exchanges[0].committed_at > 0
    again.close()


def test_each_persona_keeps_its_own_conversation(tmp_path: Path) -> None:
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    hana, _ = keeper.resume("hana")
    kai, _ = keeper.resume("kai")
    _commit(keeper, hana, 1, "For Hana", "Hana replies")
    _commit(keeper, kai, 2, "For Kai", "Kai replies")
    keeper.flush()
    assert [e.user_text for e in keeper.resume("hana")[1]] == ["For Hana"]
    assert [e.user_text for e in keeper.resume("kai")[1]] == ["For Kai"]
    keeper.close()


def test_new_reopen_delete_and_forget(tmp_path: Path) -> None:
    path = tmp_path / "hanasu.db"
    keeper = Keeper(open_database(path))
    first, _ = keeper.resume("hana")
    _commit(keeper, first, 1, "First talk", "Yes")
    second = keeper.new_conversation("hana")
    assert second != first
    _commit(keeper, second, 2, "Second talk", "Sure")
    keeper.flush()
    listed = keeper.history.conversations("hana")
    assert [c.preview for c in listed] == ["Second talk", "First talk"]
    assert [c.exchange_count for c in listed] == [1, 1]

    keeper.reopen("hana", first.conversation_id)
    keeper.close()
    keeper = Keeper(open_database(path))  # the reopened one is what a restart resumes
    key, exchanges = keeper.resume("hana")
    assert key == first and [e.user_text for e in exchanges] == ["First talk"]

    keeper.delete_conversation("hana", first.conversation_id)
    key, exchanges = keeper.resume("hana")
    assert key != first and exchanges == []
    assert [c.preview for c in keeper.history.conversations("hana")] == ["Second talk"]

    keeper.memories.add("hana", "my sister is called Mei")
    keeper.memories.add("kai", "likes chess")
    keeper.forget_everything("hana")
    assert keeper.history.conversations("hana") == []
    assert keeper.memories.all("hana") == []
    assert [m.text for m in keeper.memories.all("kai")] == ["likes chess"]
    keeper.close()


def test_exports_as_markdown_and_json(tmp_path: Path) -> None:
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    key, _ = keeper.resume("hana")
    _commit(keeper, key, 1, "Hi", "Hello there")
    _commit(keeper, key, 2, "Story?", "Once upon", interrupted=True)
    keeper.flush()
    info = keeper.history.conversations("hana")[0]
    exchanges = keeper.history.exchanges(info.id)
    markdown = export_markdown(info, exchanges, "Hana")
    assert "# Conversation with Hana" in markdown
    assert "**You:** Hi" in markdown and "**Hana:** Once upon *(interrupted)*" in markdown
    data = json.loads(export_json(info, exchanges, "Hana"))
    assert data["format"] == "hanasu-conversation" and data["persona_id"] == "hana"
    assert [e["user"] for e in data["exchanges"]] == ["Hi", "Story?"]
    assert data["exchanges"][1]["interrupted"] is True
    keeper.close()


def test_memory_requests_are_applied_when_the_turn_commits(tmp_path: Path) -> None:
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    key, _ = keeper.resume("hana")
    _commit(keeper, key, 1, "Remember that my sister is called Mei.", "I will!")
    _commit(keeper, key, 2, "Please remember I'm learning Spanish.", "¡Muy bien!")
    keeper.flush()
    assert sorted(m.text for m in keeper.memories.all("hana")) == [
        "I'm learning Spanish", "My sister is called Mei"]
    _commit(keeper, key, 3, "Forget that I'm learning Spanish.", "Done.")
    keeper.flush()
    assert [m.text for m in keeper.memories.all("hana")] == ["My sister is called Mei"]
    assert keeper.memories.all("kai") == []
    keeper.close()


def test_the_in_memory_database_keeps_nothing_on_disk(tmp_path: Path) -> None:
    from app.storage.database import Opened

    keeper = Keeper(Opened(None))
    key, _ = keeper.resume("hana")
    _commit(keeper, key, 1, "Hi", "Hello")
    keeper.flush()
    assert [e.user_text for e in keeper.resume("hana")[1]] == ["Hi"]
    keeper.close()
    assert list(tmp_path.iterdir()) == []


def test_a_read_error_gives_one_line_and_a_fresh_conversation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    notices: list[str] = []
    keeper = Keeper(open_database(tmp_path / "hanasu.db"), notices.append)
    key, _ = keeper.resume("hana")
    _commit(keeper, key, 1, "Hi", "Hello")
    keeper.flush()
    keeper._current.clear()

    def broken(*_args: object, **_kwargs: object) -> None:
        raise sqlite3.DatabaseError("disk I/O error")

    monkeypatch.setattr(keeper.history, "exchanges", broken)
    fresh, exchanges = keeper.resume("hana")
    assert exchanges == [] and fresh != key
    assert len(notices) == 1 and "disk I/O error" in notices[0]
    keeper.close()
