"""Saved conversations in the window: resumed after a restart, per persona, new, history
dialog (reopen, export, delete), memory page, forget everything."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.memory_intents import MEMORY_HEADER
from app.core.pipeline import Engines, VoicePipeline
from app.personas.loader import PersonaLibrary
from app.storage.database import open_database
from app.storage.history import Exchange
from app.storage.keeper import Keeper
from app.storage.settings import Settings
from app.ui.history_dialog import HistoryDialog
from app.ui.memory_dialog import MemoryDialog
from app.ui.window import MainWindow
from tests.ui.conftest import Speaker, feed, utterance

SHORT = "Nice to meet you."


class App:
    """A window, a keeper on ``db`` and a fake-engine pipeline wired as Session wires it."""

    def __init__(self, qtbot: QtBot, library: PersonaLibrary, db: Path,
                 said: list[str]) -> None:
        self.qtbot = qtbot
        self.keeper = Keeper(open_database(db))
        self.window = MainWindow(library, Settings(), keeper=self.keeper)
        qtbot.addWidget(self.window)
        self.window.show()
        self.llm = FakeLanguageModel(reply=SHORT)
        engines = Engines(FakeVoiceActivity(), FakeRecognizer(said), self.llm, FakeSynthesizer())
        self.pipeline = VoicePipeline(engines, self.window.persona.full_system_prompt())
        self.pipeline.add_observer(self.window.bridge.post)
        self.pipeline.add_observer(self.keeper.observer(self.pipeline))
        self.pipeline.set_context_provider(self.keeper.context)
        self.pipeline.start()
        self.window.attach_pipeline(self.pipeline)
        self.speaker = Speaker(self.pipeline, speed=4.0)

    def talk(self) -> tuple[int, str]:
        with self.qtbot.waitSignal(self.window.bridge.playback_ended, timeout=15_000) as ended:
            feed(self.pipeline, *utterance())
        turn_id, heard, _ = ended.args
        self.qtbot.waitUntil(self.pipeline.is_idle, timeout=5_000)
        self.keeper.flush()
        return int(turn_id), str(heard)

    def close(self) -> None:
        self.speaker.stop()
        self.window.detach_pipeline()
        self.pipeline.stop()
        self.window.shutdown()
        self.window.close()
        self.keeper.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "hanasu.db"


@pytest.fixture
def apps(qtbot: QtBot, library: PersonaLibrary, db: Path) -> Iterator[list[App]]:
    made: list[App] = []
    yield made
    for app in made:
        if app.keeper._writer.is_alive():
            app.close()


def _shown_users(window: MainWindow) -> list[str]:
    return [entry.user for entry in window.transcript.model.visible()]


def test_a_restarted_window_resumes_the_conversation(
        qtbot: QtBot, library: PersonaLibrary, db: Path, apps: list[App]) -> None:
    first = App(qtbot, library, db, ["My name is Aiko.", "I like rainy days."])
    apps.append(first)
    first.talk()
    first.talk()
    assert _shown_users(first.window) == ["My name is Aiko.", "I like rainy days."]
    first.close()

    second = App(qtbot, library, db, ["What is my name?"])
    apps.append(second)
    assert _shown_users(second.window) == ["My name is Aiko.", "I like rainy days."]
    entries = second.window.transcript.model.visible()
    assert all(e.spoken() == SHORT for e in entries)
    assert "My name is Aiko." in second.window.transcript.user_text(entries[0].turn_id)
    second.talk()
    prompt = second.llm.prompts[-1]
    assert [(m.role, m.content) for m in prompt[1:5]] == [
        ("user", "My name is Aiko."), ("assistant", SHORT),
        ("user", "I like rainy days."), ("assistant", SHORT)]
    assert prompt[-1].content.endswith("What is my name?")
    assert _shown_users(second.window)[-1] == "What is my name?"


def test_each_persona_keeps_its_conversation_and_new_starts_fresh(
        qtbot: QtBot, library: PersonaLibrary, db: Path, apps: list[App]) -> None:
    app = App(qtbot, library, db, ["Hello Hana.", "Hello Kai.", "Hello again."])
    apps.append(app)
    window = app.window
    hana = window.persona
    kai = next(p for p in library.personas if p.id != hana.id)
    app.talk()
    window.sidebar.select(kai.id)
    window._on_persona_selected(kai)
    assert _shown_users(window) == []
    app.talk()
    window._on_persona_selected(hana)
    assert _shown_users(window) == ["Hello Hana."]
    app.talk()
    prompt = app.llm.prompts[-1]
    assert next(m.content for m in prompt if m.role == "user") == "Hello Hana."
    assert "Hello Kai." not in [m.content for m in prompt]

    assert window.conversations is not None
    window.conversations.new_action.trigger()
    assert _shown_users(window) == []
    assert not window.transcript._hint.isHidden()
    app.talk()
    assert [m.role for m in app.llm.prompts[-1]] == ["system", "user"]
    assert len(app.keeper.history.conversations(hana.id)) == 2


def test_history_dialog_reopens_exports_and_deletes(
        qtbot: QtBot, library: PersonaLibrary, db: Path, apps: list[App],
        tmp_path: Path) -> None:
    app = App(qtbot, library, db, ["Tell me about whales.", "And now about owls."])
    apps.append(app)
    window = app.window
    assert window.conversations is not None
    app.talk()
    window.conversations.new_action.trigger()
    app.talk()
    dialog = window.conversations.open_history()
    qtbot.addWidget(dialog)
    assert dialog.list.count() == 2
    assert "And now about owls." in dialog.list.item(0).text()
    assert "open now" in dialog.list.item(0).text()
    dialog.list.setCurrentRow(1)
    assert "Tell me about whales." in dialog.preview.toPlainText()
    assert SHORT in dialog.preview.toPlainText()

    assert dialog.export_to(tmp_path / "whales.md", "md")
    assert "**You:** Tell me about whales." in (tmp_path / "whales.md").read_text()
    assert dialog.export_to(tmp_path / "whales.json", "json")
    data = json.loads((tmp_path / "whales.json").read_text())
    assert data["exchanges"][0]["user"] == "Tell me about whales."
    assert "Exported to" in dialog.status.text()

    dialog.open_button.click()  # continue the whale conversation
    assert _shown_users(window) == ["Tell me about whales."]
    assert "open now" in dialog.list.item(1).text()  # listed by last activity still
    assert "open now" not in dialog.list.item(0).text()

    asked: list[str] = []
    dialog.confirm = lambda question: asked.append(question) or False
    dialog.list.setCurrentRow(0)
    dialog.delete_button.click()
    assert asked and dialog.list.count() == 2  # said no: nothing deleted
    dialog.confirm = lambda question: True
    dialog.list.setCurrentRow(1)  # the current (whale) conversation
    dialog.delete_button.click()
    assert dialog.list.count() == 1
    assert _shown_users(window) == []  # deleting the current one starts fresh
    assert [c.preview for c in app.keeper.history.conversations(window.persona.id)
            if c.exchange_count] == ["And now about owls."]


def test_memories_from_speech_reach_the_prompt_and_the_memory_page(
        qtbot: QtBot, library: PersonaLibrary, db: Path, apps: list[App]) -> None:
    app = App(qtbot, library, db, ["Please remember that my sister is called Mei.",
                                   "What do you remember about me?"])
    apps.append(app)
    window = app.window
    assert window.conversations is not None
    app.talk()
    app.talk()
    last = app.llm.prompts[-1][-1]
    assert last.content.startswith(MEMORY_HEADER)
    assert "- My sister is called Mei" in last.content
    assert app.llm.prompts[-1][0].content == window.persona.full_system_prompt()

    page = window.conversations.open_memories()
    qtbot.addWidget(page)
    assert page.texts() == ["My sister is called Mei"]
    page.new_text.setText("I'm learning Spanish")
    page.add_button.click()
    assert sorted(page.texts()) == ["I'm learning Spanish", "My sister is called Mei"]
    item = page.list.findItems("My sister is called Mei", Qt.MatchFlag.MatchExactly)[0]
    item.setText("My sister Mei lives in Kyoto")
    assert "My sister Mei lives in Kyoto" in page.texts()
    assert app.keeper.memories.search(window.persona.id, "Kyoto")
    page.list.setCurrentRow(page.texts().index("I'm learning Spanish"))
    page.delete_selected()
    assert page.texts() == ["My sister Mei lives in Kyoto"]

    window.conversations.forget_everything()
    assert page.texts() == []
    assert not page.empty.isHidden()
    assert _shown_users(window) == []
    assert app.keeper.history.conversations(window.persona.id) == []


def test_dialogs_show_an_empty_state(qtbot: QtBot, db: Path) -> None:
    keeper = Keeper(open_database(db))
    history = HistoryDialog(keeper.history, {"hana": "Hana"}, None)
    memories = MemoryDialog(keeper.memories, "hana", "Hana")
    for dialog in (history, memories):
        qtbot.addWidget(dialog)
        dialog.show()
    assert not history.empty.isHidden() and not history.open_button.isEnabled()
    assert not memories.empty.isHidden() and not memories.delete_button.isEnabled()
    keeper.close()


def test_a_damaged_database_is_moved_aside_with_a_notice_in_the_window(
        qtbot: QtBot, tmp_path: Path) -> None:
    from app.ui.main import create_window

    data = Path(str(tmp_path / "data"))  # HANASU_DATA_DIR of tests/ui/conftest.py
    data.mkdir(parents=True, exist_ok=True)
    (data / "hanasu.db").write_bytes(b"\x00garbage" * 1000)
    window = create_window()
    qtbot.addWidget(window)
    [notice] = [m for m in window.notices.messages if "conversation database" in m]
    assert "damaged" in notice and "hanasu.db.corrupt-" in notice
    assert any(p.name.startswith("hanasu.db.corrupt-") for p in data.iterdir())
    assert window.conversations is not None
    keeper = window.conversations.keeper
    assert keeper.db.persistent  # a clean database was started

    with keeper.db.read() as conn:  # now the disk fills up
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
    big = "x" * 200_000
    for _ in range(2):
        keeper.submit(lambda: keeper.history.add_exchange(
            "hana", "c1", Exchange(big, big)))
    keeper.flush()
    window.bridge.drain()
    full = [m for m in window.notices.messages if "disk is full" in m]
    assert len(full) == 1
    window.shutdown()
    keeper.close()


def test_a_restarted_pipeline_gets_the_exchanges_of_this_session(
        qtbot: QtBot, library: PersonaLibrary, db: Path, apps: list[App]) -> None:
    """Settings changes rebuild the pipeline: the new one must know the whole conversation."""
    app = App(qtbot, library, db, ["First thing.", "Second thing."])
    apps.append(app)
    app.talk()
    app.window.detach_pipeline()
    app.pipeline.stop()
    app.speaker.stop()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(["After the restart."]), app.llm,
                      FakeSynthesizer())
    app.pipeline = VoicePipeline(engines, app.window.persona.full_system_prompt())
    app.pipeline.add_observer(app.window.bridge.post)
    app.pipeline.add_observer(app.keeper.observer(app.pipeline))
    app.pipeline.start()
    app.window.attach_pipeline(app.pipeline)
    app.speaker = Speaker(app.pipeline, speed=4.0)
    app.talk()
    users = [m.content for m in app.llm.prompts[-1] if m.role == "user"]
    assert users == ["First thing.", "After the restart."]
