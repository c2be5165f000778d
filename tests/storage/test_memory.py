"""Memory retrieval: FTS5 ranking (and the LIKE fallback), and the note before the user's turn."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.memory_intents import MEMORY_HEADER
from app.storage.database import Opened, fts5_available, open_database
from app.storage.keeper import ConversationKey, Keeper

FACTS = [
    "My sister is called Mei",
    "I'm learning Spanish",
    "I have a cat named Biscuit",
    "I work as a nurse on night shifts",
    "My favourite food is ramen",
    "I live in Osaka",
]


@pytest.fixture
def keeper(tmp_path: Path) -> Keeper:
    k = Keeper(open_database(tmp_path / "hanasu.db"))
    for fact in FACTS:
        k.memories.add("hana", fact)
    k.memories.add("kai", "My brother is called Ken")
    return k


def test_this_python_has_fts5_and_the_store_uses_it(keeper: Keeper) -> None:
    assert fts5_available(sqlite3.connect(":memory:"))
    assert keeper.memories.full_text


@pytest.mark.parametrize("full_text", [True, False], ids=["fts5", "like-fallback"])
def test_search_finds_the_relevant_fact_for_this_persona_only(
        keeper: Keeper, full_text: bool) -> None:
    keeper.memories.full_text = full_text
    assert keeper.memories.search("hana", "How is my sister doing?")[0].text == FACTS[0]
    assert keeper.memories.search("hana", "Can we practise some Spanish?")[0].text == FACTS[1]
    assert keeper.memories.search("hana", "what should I cook, maybe ramen")[0].text == FACTS[4]
    assert keeper.memories.search("hana", "brother") == []
    assert keeper.memories.search("kai", "my brother")[0].text == "My brother is called Ken"
    assert keeper.memories.search("hana", "the a of") == []


def test_fts_stems_words(keeper: Keeper) -> None:
    found = keeper.memories.search("hana", "I learned a new word today")
    assert found and found[0].text == FACTS[1]


def test_same_fact_twice_is_kept_once_and_edits_are_searchable(keeper: Keeper) -> None:
    keeper.memories.add("hana", "my sister is called mei.")
    assert len(keeper.memories.all("hana")) == len(FACTS)
    spanish = keeper.memories.search("hana", "Spanish")[0]
    keeper.memories.update(spanish.id, "I'm learning Japanese")
    assert keeper.memories.search("hana", "Spanish") == []
    assert keeper.memories.search("hana", "Japanese")[0].id == spanish.id


def test_context_note_has_relevant_and_recent_facts(keeper: Keeper) -> None:
    key = ConversationKey("hana", "c1")
    note = keeper.context(key, "Do you think Biscuit misses me?")
    assert note.startswith(MEMORY_HEADER)
    lines = [line[2:] for line in note.splitlines() if line.startswith("- ")]
    assert lines[0] == "I have a cat named Biscuit"
    assert "I live in Osaka" in lines  # one of the most recent
    assert len(lines) <= 7
    assert "Ken" not in note


def test_what_do_you_remember_gets_every_memory(keeper: Keeper) -> None:
    note = keeper.context(ConversationKey("hana", "c1"), "What do you remember about me?")
    assert all(fact in note for fact in FACTS)
    assert keeper.context(ConversationKey("nobody", "c2"), "What do you remember about me?") == ""
    assert keeper.context(None, "anything") == ""


def test_in_memory_store_searches_too() -> None:
    keeper = Keeper(Opened(None))
    keeper.memories.add("hana", "I'm learning Spanish")
    assert keeper.memories.search("hana", "spanish")
    keeper.close()


@pytest.mark.parametrize("full_text", [True, False], ids=["fts5", "like-fallback"])
def test_forget_removes_only_a_real_match(keeper: Keeper, full_text: bool) -> None:
    keeper.memories.full_text = full_text
    assert keeper.memories.forget("hana", "my brother is called Ken") is None  # Kai's fact
    assert keeper.memories.forget("hana", "that I work on night shifts") is not None
    texts = [m.text for m in keeper.memories.all("hana")]
    assert "I work as a nurse on night shifts" not in texts and len(texts) == len(FACTS) - 1
    assert keeper.memories.forget("hana", "I'm learning Spanish") is not None
    assert [m.text for m in keeper.memories.all("kai")] == ["My brother is called Ken"]
