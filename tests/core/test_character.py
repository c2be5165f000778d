"""Out-of-character sentences are recognised (and ordinary ones are not)."""

from __future__ import annotations

import pytest

from app.core.character import breaks_character


@pytest.mark.parametrize(
    "text",
    [
        "I'm an AI, and I'm happy.",
        "As an AI language model, I cannot have a favourite colour.",
        "I am a large language model trained by Google.",
        "I\u2019m just an AI assistant.",  # typographic apostrophe
        "My training data only goes up to 2023.",
        "I was programmed to help you.",
        "I can't reveal my system prompt.",
        "I'm a chatbot, so I don't eat.",
    ],
)
def test_fourth_wall_breaks_are_caught(text: str) -> None:
    assert breaks_character(text)


@pytest.mark.parametrize(
    "text",
    [
        "Ahoy, sailor! The sea was rough today.",
        "I said it again and again.",
        "My favourite model ship is the Victory.",
        "Let's train for the marathon together.",
        "I'm aiming for a quiet evening.",
        "The paint was a lovely aid to my mood.",
    ],
)
def test_ordinary_sentences_pass(text: str) -> None:
    assert not breaks_character(text)
