"""The reply filter both language models speak through: nothing after a stop string, never a
Gemma 4 thought block, no leading whitespace; the same speech however the stream's pieces
split the markers, and ordinary text passes one piece at a time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.adapters.stream_filters import ReplyFilter, StopFilter, ThoughtFilter

TEXT = "<|channel>thought\nThe user wants a colour.<channel|>Blue, like the sea!"
STOPS = ("<eos>", "<end_of_turn>", "<turn|>")
REPLY = "  <|channel>plan: be kind<channel|> Blue, <i>like</i> the sea!<end_of_turn>never said"


def run(pieces: list[str]) -> str:
    f = ThoughtFilter()
    return "".join(f.feed(p) for p in pieces) + f.flush()


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def spoken(stops: tuple[str, ...], pieces: list[str], last: str = "") -> list[str]:
    f = ReplyFilter(stops)
    out = [f.feed(p) for p in pieces]
    return [*out, f.finish(last)]


def test_block_is_removed() -> None:
    assert run([TEXT]) == "Blue, like the sea!"


def test_text_without_markers_passes_through_token_by_token() -> None:
    f = ThoughtFilter()
    assert [f.feed(p) for p in ["Hello", " there", "!"]] == ["Hello", " there", "!"]


def test_a_lone_angle_bracket_is_held_only_until_it_cannot_be_a_marker() -> None:
    f = ThoughtFilter()
    assert f.feed("a <") == "a "
    assert f.feed("b") == "<b"


@given(st.lists(st.integers(min_value=1, max_value=len(TEXT) - 1), max_size=12))
def test_any_split_gives_the_same_speech(cuts: list[int]) -> None:
    assert run(split(TEXT, cuts)) == "Blue, like the sea!"


def test_unclosed_block_at_the_end_says_nothing() -> None:
    assert run(["Sure. ", "<|channel>thinking about it"]) == "Sure. "


def test_stop_filter_holds_back_gemma_end_markers() -> None:
    stop = StopFilter(STOPS)
    out = [stop.feed(p) for p in ["Hello", " there", "<", "turn", "|>", " never"]]
    assert out == ["Hello", " there", "", "", "", ""]
    assert stop.stopped
    plain = StopFilter(["<turn|>"])
    assert [plain.feed(p) for p in ["a <", "b"]] == ["a ", "<b"]


def test_reply_token_by_token_with_every_marker_split() -> None:
    pieces = ["  ", "<|chan", "nel>plan: be", " kind<chan", "nel|>", " Blue", ",", " <i>like",
              "</i> the", " sea!", "<end_", "of_", "turn>", "never said"]
    out = spoken(STOPS, pieces)
    assert "".join(out) == "Blue, <i>like</i> the sea!"
    assert out[5:10] == ["Blue", ",", " <i>like", "</i> the", " sea!"]  # one piece each


@given(st.lists(st.integers(min_value=1, max_value=len(REPLY) - 1), max_size=20))
def test_reply_is_the_same_for_any_split(cuts: list[int]) -> None:
    assert "".join(spoken(STOPS, split(REPLY, cuts))) == "Blue, <i>like</i> the sea!"


def test_one_character_at_a_time() -> None:
    assert "".join(spoken(STOPS, list(REPLY))) == "Blue, <i>like</i> the sea!"


def test_nothing_is_fed_through_after_the_stop() -> None:
    f = ReplyFilter(["<|im_end|>"])
    assert f.feed("Hi<|im_end|>") == "Hi"
    assert f.stopped
    assert f.feed(" more") == ""
    assert f.finish("tail") == ""


def test_leading_whitespace_is_stripped_across_pieces_and_only_at_the_start() -> None:
    assert spoken(STOPS, [" ", "\n", " Hi", " there"]) == ["", "", "Hi", " there", ""]


def test_a_held_partial_marker_comes_out_at_the_end() -> None:
    assert spoken(STOPS, ["Hi <end_of"]) == ["Hi ", "<end_of"]
    assert spoken(STOPS, ["Hi <|chan"]) == ["Hi ", "<|chan"]


def test_finish_takes_a_decoders_last_text() -> None:
    assert spoken(STOPS, ["caf"], last="é") == ["caf", "é"]
    assert spoken(STOPS, [" "], last=" é") == ["", "é"]
