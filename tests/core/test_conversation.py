"""Prompt assembly is append-only (so llama.cpp reuses the prefix) and records heard text."""

from __future__ import annotations

from app.core.conversation import Conversation


def test_prompt_of_the_next_turn_extends_the_previous_one() -> None:
    conversation = Conversation("You are Kai.")
    first = conversation.messages_for("Hello")
    conversation.commit("Hello", "Hi! How can I help?")
    second = conversation.messages_for("Tell me more")
    assert second[: len(first)] == first
    assert [m.role for m in second] == ["system", "user", "assistant", "user"]
    assert second[2].content == "Hi! How can I help?"


def test_unanswered_user_text_is_merged_into_the_next_message() -> None:
    conversation = Conversation("You are Kai.")
    conversation.commit("Tell me", "")
    assert conversation.user_text_for("a joke") == "Tell me a joke"
    conversation.commit("Tell me a joke", "Why did the chicken")
    assert conversation.user_text_for("Go on") == "Go on"


def test_history_is_trimmed_from_the_oldest_exchange() -> None:
    conversation = Conversation("sys", max_history_chars=50)
    for i in range(10):
        conversation.commit(f"question {i}", f"answer number {i}")
    assert conversation.exchanges[-1] == ("question 9", "answer number 9")
    assert sum(len(u) + len(a) for u, a in conversation.exchanges) <= 50
