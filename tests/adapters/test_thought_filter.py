"""A Gemma 4 thought block is never spoken, however the tokens split its markers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.adapters.llama_llm import _ThoughtFilter

TEXT = "<|channel>thought\nThe user wants a colour.<channel|>Blue, like the sea!"


def run(pieces: list[str]) -> str:
    f = _ThoughtFilter()
    return "".join(f.feed(p) for p in pieces) + f.flush()


def test_block_is_removed() -> None:
    assert run([TEXT]) == "Blue, like the sea!"


def test_text_without_markers_passes_through_token_by_token() -> None:
    f = _ThoughtFilter()
    assert [f.feed(p) for p in ["Hello", " there", "!"]] == ["Hello", " there", "!"]


def test_a_lone_angle_bracket_is_held_only_until_it_cannot_be_a_marker() -> None:
    f = _ThoughtFilter()
    assert f.feed("a <") == "a "
    assert f.feed("b") == "<b"


@given(st.lists(st.integers(min_value=1, max_value=len(TEXT) - 1), max_size=12))
def test_any_split_gives_the_same_speech(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    pieces = [TEXT[a:b] for a, b in zip([0, *points], [*points, len(TEXT)], strict=True)]
    assert run(pieces) == "Blue, like the sea!"


def test_unclosed_block_at_the_end_says_nothing() -> None:
    assert run(["Sure. ", "<|channel>thinking about it"]) == "Sure. "
