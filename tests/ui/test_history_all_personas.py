"""History lists every persona's conversations, a deleted persona's included, with dates,
a persona filter and a search over what was said (issue 23, item 11)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.personas.loader import PersonaLibrary
from app.storage.database import open_database
from app.storage.history import Exchange
from app.storage.keeper import Keeper
from app.storage.settings import Settings
from app.ui.history_dialog import HistoryDialog, when_short
from app.ui.keyboard import interactive_widgets
from app.ui.window import MainWindow


@pytest.fixture
def keeper(tmp_path: Path) -> Iterator[Keeper]:
    kept = Keeper(open_database(tmp_path / "hanasu.db"))
    now = time.time()
    talks = [("hana", "h1", "Tell me about whales.", "Whales sing to each other."),
             ("ghost", "g1", "Do you remember the 100% cotton shirt?", "I do, the blue one."),
             ("hana", "h2", "What is a good tea for the evening?", "Try a roasted hojicha.")]
    for n, (persona_id, conversation_id, user, heard) in enumerate(talks):
        kept.history.add_exchange(persona_id, conversation_id,
                                  Exchange(user, heard, committed_at=now - 3600 * (3 - n)))
    yield kept
    kept.close()


@pytest.fixture
def window(qtbot: QtBot, library: PersonaLibrary, keeper: Keeper) -> Iterator[MainWindow]:
    win = MainWindow(library, Settings(persona_id="hana"), keeper=keeper)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.shutdown()


def _rows(dialog: HistoryDialog) -> list[str]:
    return [dialog.list.item(i).text() for i in range(dialog.list.count())]


def test_every_persona_is_listed_with_its_name_and_date(window: MainWindow) -> None:
    assert window.conversations is not None
    dialog = window.conversations.open_history()
    rows = _rows(dialog)
    assert len(rows) == 3
    assert rows[0].startswith(when_short(dialog.selected.updated_at))  # type: ignore[union-attr]
    assert "Hana" in rows[0] and "hojicha" not in rows[0]  # the title is the user's words
    assert "ghost (deleted persona)" in rows[1]
    dialog.list.setCurrentRow(1)
    assert "With ghost (deleted persona)" in dialog.preview.toPlainText()
    assert "the blue one" in dialog.preview.toPlainText()
    assert not dialog.open_button.isEnabled()  # read, export, delete: not continued
    assert dialog.open_button.text() == "Persona deleted"
    assert dialog.markdown_button.isEnabled() and dialog.delete_button.isEnabled()
    unnamed = [w for w in interactive_widgets(dialog) if not w.accessibleName().strip()]
    assert unnamed == []  # the search box and the filter too (issue 23 item 9)


def test_search_and_persona_filter(window: MainWindow) -> None:
    assert window.conversations is not None
    dialog = window.conversations.open_history()
    dialog.search.setText("WHALES")  # any case
    assert [r.split("\n")[1] for r in _rows(dialog)] == ["“Tell me about whales.”"]
    dialog.search.setText("hojicha")  # what the persona said counts too
    assert len(_rows(dialog)) == 1 and "good tea" in _rows(dialog)[0]
    dialog.search.setText("100%")  # a literal %, not a wildcard
    assert len(_rows(dialog)) == 1 and "ghost" in _rows(dialog)[0]
    dialog.search.setText("_")
    assert _rows(dialog) == [] and dialog.empty.text() == "No conversation matches."
    dialog.search.clear()
    dialog.show_persona("hana")
    assert len(_rows(dialog)) == 2 and all("Hana" in r for r in _rows(dialog))
    dialog.show_persona(None)
    assert len(_rows(dialog)) == 3


def test_continuing_another_personas_conversation_switches_to_it(
        qtbot: QtBot, library: PersonaLibrary, keeper: Keeper, window: MainWindow) -> None:
    other = next(p for p in library.personas if p.id != "hana")
    keeper.history.add_exchange(other.id, "o1", Exchange("Sing me something.", "La la la.",
                                                         committed_at=time.time()))
    assert window.conversations is not None and window.persona.id == "hana"
    dialog = window.conversations.open_history()
    assert other.name in _rows(dialog)[0]
    dialog.list.setCurrentRow(0)
    dialog.open_button.click()
    assert window.persona.id == other.id
    assert window.conversations.key is not None
    assert window.conversations.key.conversation_id == "o1"
    assert [e.user for e in window.transcript.model.visible()] == ["Sing me something."]
