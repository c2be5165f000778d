"""Explicit memory requests are recognised by rules; anything else is left alone."""

from __future__ import annotations

import pytest

from app.core.memory_intents import (
    Forget,
    Recall,
    Remember,
    memory_note,
    parse,
    with_memories,
)
from app.core.ports import ChatMessage


@pytest.mark.parametrize(("text", "fact"), [
    ("remember that my sister is called Mei", "My sister is called Mei"),
    ("Please remember I'm learning Spanish.", "I'm learning Spanish"),
    ("Okay Hana, remember that I hate coriander!", "I hate coriander"),
    ("Can you remember that my birthday is in May?", "My birthday is in May"),
    ("Don't forget that I have an exam on Friday.", "I have an exam on Friday"),
    ("Keep in mind that I'm vegetarian", "I'm vegetarian"),
    ("Thanks. Remember that my cat is called Biscuit. Anyway!", "My cat is called Biscuit"),
])
def test_remember_requests(text: str, fact: str) -> None:
    assert parse(text) == Remember(fact)


@pytest.mark.parametrize(("text", "fact"), [
    ("forget that I'm learning Spanish", "I'm learning Spanish"),
    ("Please forget about my ex.", "My ex"),
    ("Could you forget what I said about my job?", "My job"),
])
def test_forget_requests(text: str, fact: str) -> None:
    assert parse(text) == Forget(fact)


@pytest.mark.parametrize("text", [
    "What do you remember about me?",
    "So what do you know about me?",
    "Hana, what did you remember?",
])
def test_recall_questions(text: str) -> None:
    assert parse(text) == Recall()


@pytest.mark.parametrize("text", [
    "I remember that day at the beach.",
    "Do you remember that I like tea?",
    "I always forget my keys.",
    "We should remember to buy milk",  # not a request to the persona
    "Did you forget?",
    "Forget it.",
    "Tell me a story about a dragon.",
    "",
])
def test_everything_else_is_not_a_request(text: str) -> None:
    assert parse(text) is None


def test_note_goes_in_front_of_the_new_user_message_only() -> None:
    messages = [ChatMessage("system", "You are Hana."), ChatMessage("user", "Hi"),
                ChatMessage("assistant", "Hello"), ChatMessage("user", "How is Mei?")]
    note = memory_note(["My sister is called Mei"])
    out = with_memories(messages, note)
    assert out[:3] == messages[:3]  # system prompt and history byte-identical: cached
    assert out[3].role == "user"
    assert out[3].content.endswith("How is Mei?") and "- My sister is called Mei" in out[3].content
    assert messages[3].content == "How is Mei?"  # the history itself is untouched
    assert with_memories(messages, "") == messages
    assert memory_note([]) == ""
