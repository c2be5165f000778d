"""Tests for the streaming sentence gate (app.core.sentences)."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.gate_config import GateConfig
from app.core.sentences import SentenceGate, speakable_text

SENTENCE_END = re.compile(r"[.!?…。！？][\"')\]}”’」』）]*$")  # noqa: RUF001
ABBREVIATIONS = ["Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "Sr.", "Jr.", "St.", "vs.", "etc."]
ABBREVIATIONS += ["e.g.", "i.e.", "U.S.", "a.m.", "p.m.", "approx."]


WHOLE_FIRST_CHUNK = GateConfig(first_chunk_break_words=0)
"""The gate without first-chunk breaks: the rules before them, tested on their own."""


def chunks_of(tokens: list[str], config: GateConfig | None = None) -> list[str]:
    gate = SentenceGate(config)
    out: list[str] = []
    for token in tokens:
        out += gate.push(token)
    return out + gate.flush()


def split_at(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted({c % (len(text) + 1) for c in cuts}), len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


def normalise(text: str) -> str:
    return " ".join(text.split())


# --- concrete examples -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hello there, how are you doing today? I am fine.",
            ["Hello there,", "how are you doing today?", "I am fine."],
        ),
        (
            "Well, I think that the answer is simple, really. Yes.",
            ["Well, I think that the answer is simple,", "really.", "Yes."],
        ),
        ("Pi is 3.14 roughly. Next.", ["Pi is 3.14 roughly.", "Next."]),
        (
            "Dr. Smith arrived at 5 p.m. today. Then...",
            ["Dr. Smith arrived", "at 5 p.m. today.", "Then..."],
        ),
        ("こんにちは。元気ですか？", ["こんにちは。", "元気ですか？"]),
        (
            "今日はとても良い天気ですね、散歩に行きましょう。",
            ["今日はとても良い天気ですね、", "散歩に行きましょう。"],
        ),
        ("J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it.", "Yes."]),
        ("It costs 2,000 at 3:45 today. Ok.", ["It costs 2,000", "at 3:45 today.", "Ok."]),
        ("See No. 5 on the list. No. I refuse.",
         ["See No. 5", "on the list.", "No.", "I refuse."]),
        ("Well... maybe not. Wait... What?", ["Well... maybe not.", "Wait...", "What?"]),
        ("That is true. We sell apples, pears, etc.",
         ["That is true.", "We sell apples, pears, etc."]),
        (
            'He said "Stop." Then left. Really?! Yes.',
            ['He said "Stop."', "Then left.", "Really?!", "Yes."],
        ),
        ("*smiles warmly* Hi there! 😊 How are you?", ["Hi there!", "How are you?"]),
        ("That is funny! *laughs* Okay.", ["That is funny!", "Okay."]),
        ("I *really* like **this** one.", ["I really like this one."]),
        (
            "Run `ls -la` and see [the docs](https://x.org/a) now.",
            ["Run ls -la", "and see the docs now."],
        ),
        (
            "Options:\n- **Tea** with milk\n* Coffee\n2. Juice\n## Done\n```py\nx\n```\n",
            ["Options:", "Tea with milk", "Coffee", "Juice", "Done", "x"],
        ),
        ("---\n2 * 3 is 6.", ["2 * 3 is 6."]),
        ("😊 👍🏽", []),
        ("", []),
    ],
)
def test_examples(text: str, expected: list[str]) -> None:
    assert chunks_of([text]) == expected
    assert chunks_of(list(text)) == expected


def test_chunk_is_emitted_as_soon_as_the_next_token_arrives() -> None:
    gate = SentenceGate()
    assert gate.push("Hello there.") == []  # "there." might still continue ("there.com")
    assert gate.push(" How") == ["Hello there."]
    assert gate.push(" are you?") == []
    assert gate.flush() == ["How are you?"]


def test_first_clause_is_emitted_early() -> None:
    gate = SentenceGate()
    assert gate.push("Well, I think that the answer is simple,") == []
    assert gate.push(" really") == ["Well, I think that the answer is simple,"]


def test_cjk_sentence_end_needs_no_space() -> None:
    gate = SentenceGate()
    assert gate.push("こんにちは。") == []
    assert gate.push("元") == ["こんにちは。"]


def test_decimal_and_abbreviation_are_not_split_while_streaming() -> None:
    gate = SentenceGate()
    assert gate.push("Pi is 3.") == []
    assert gate.push("14 and Dr.") == []
    assert gate.push(" Smith agrees. So") == ["Pi is 3.14 and Dr. Smith agrees."]


def test_markup_split_across_tokens_is_held_back() -> None:
    gate = SentenceGate()
    out: list[str] = []
    for token in ["Sure. ", "*", "smiles", " warmly", "*", " Let", "'s go."]:
        out += gate.push(token)
    assert out + gate.flush() == ["Sure.", "Let's go."]


def test_unterminated_asterisk_gives_up_after_the_span_limit() -> None:
    gate = SentenceGate()
    out = gate.push("*" + "word " * 50 + "end. Next")
    assert len(out) == 1
    assert out[0].startswith("*word word") and out[0].endswith("end.")


def test_max_chunk_chars_splits_at_word_boundaries() -> None:
    chunks = chunks_of(["word " * 30], GateConfig(max_chunk_chars=40))
    assert len(chunks) > 1
    assert all(
        len(chunk) <= 40 and chunk.split() == ["word"] * len(chunk.split()) for chunk in chunks
    )


def test_the_chunk_after_a_first_clause_may_end_at_a_clause_too() -> None:
    # the short first clause plays ~1 s; the rest of the long sentence would take longer
    # than that to synthesize, so it is cut at its next clause as well
    text = "Bees collect nectar from flowers, bring it back to the hive, and fan it dry. Then."
    assert chunks_of([text], WHOLE_FIRST_CHUNK) == [
        "Bees collect nectar from flowers,",
        "bring it back to the hive,",
        "and fan it dry.",
        "Then.",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The sky looks blue to us because sunlight scatters in the air. Yes.",
            ["The sky looks blue to us", "because sunlight scatters in the air.", "Yes."],
        ),
        (
            "I went to the shop this morning and I bought bread. Then.",
            ["I went to the shop this morning", "and I bought bread.", "Then."],
        ),
        # too few words before it: one chunk, as before
        ("The sky is blue because of the air.", ["The sky is blue because of the air."]),
        # a name after "and" is not a new clause
        (
            "I just read the old play Romeo and Juliet last night.",
            ["I just read the old play Romeo and Juliet last night."],
        ),
        # not an opener here: a word that only starts like one, or one a mark follows
        (
            "My new phone runs on the latest android version.",
            ["My new phone runs on the latest android version."],
        ),
        (
            "I will never ever say that word but. Ok.",
            ["I will never ever say that word but.", "Ok."],
        ),
        # only early chunks: a later sentence still ends at its full stop
        (
            "Sure. Dogs love to play outside and they need walks every day.",
            ["Sure.", "Dogs love to play outside and they need walks every day."],
        ),
    ],
)
def test_an_early_chunk_without_a_comma_may_end_before_a_clause_opener(
    text: str, expected: list[str]
) -> None:
    # a comma-free first sentence would hold the first audio until its full stop
    assert chunks_of([text], WHOLE_FIRST_CHUNK) == expected
    assert chunks_of(list(text), WHOLE_FIRST_CHUNK) == expected


def test_a_long_first_sentence_may_end_before_a_preposition() -> None:
    looping = ("The most famous and famously accurate answer of the most accurate answer of "
               "the most accurate answer.")
    chunks = chunks_of([looping], WHOLE_FIRST_CHUNK)
    assert chunks[0] == "The most famous and famously accurate answer of the most accurate answer"
    assert chunks == chunks_of(list(looping), WHOLE_FIRST_CHUNK)  # however the tokens fall
    assert " ".join(chunks) == looping  # nothing lost or doubled
    # fewer than ten words before the preposition: one chunk, as before
    assert chunks_of(["The moon is about a day away from Earth by rocket. Yes."],
                     WHOLE_FIRST_CHUNK) == [
        "The moon is about a day away from Earth by rocket.", "Yes."]
    # only early chunks: later sentences end at their marks
    assert chunks_of(["Sure, I can. " + looping]) == ["Sure, I can.", looping]
    assert chunks_of([looping], GateConfig(phrase_openers=frozenset(),
                                           first_chunk_break_words=0)) == [looping]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a long number is seconds of speech: the words before it are heard first
        ("The moon is 222,750 miles away from our planet. Yes.",
         ["The moon is", "222,750 miles away from our planet.", "Yes."]),
        ("The tallest mountain is 13,895.24 meters high.",
         ["The tallest mountain is", "13,895.24 meters high."]),
        # short to say: a year, "2,000", a count
        ("Neil Armstrong landed in 1969. Wow.", ["Neil Armstrong landed in 1969.", "Wow."]),
        ("It is about 2,000 km.", ["It is about 2,000 km."]),
        ("A spider has 8 legs.", ["A spider has 8 legs."]),
        # too few words before it, or not early in the reply
        ("It is 222,750 miles.", ["It is 222,750 miles."]),
        ("Sure. The moon is 222,750 miles away.", ["Sure.", "The moon is 222,750 miles away."]),
    ],
)
def test_an_early_chunk_may_end_before_a_long_number(text: str, expected: list[str]) -> None:
    assert chunks_of([text], WHOLE_FIRST_CHUNK) == expected
    # "2" that becomes "222,750" is judged whole
    assert chunks_of(list(text), WHOLE_FIRST_CHUNK) == expected
    assert chunks_of([text], GateConfig(number_break_min_words=0)) == chunks_of(
        [text], GateConfig(long_number_digits=99))  # either turns the breaks off


def test_number_breaks_can_be_turned_off() -> None:
    text = "The moon is 222,750 miles away."
    assert chunks_of([text], GateConfig(number_break_min_words=0)) == [text]


def test_clause_opener_breaks_can_be_turned_off_or_tuned() -> None:
    text = "The sky looks blue to us because sunlight scatters in the air."
    assert chunks_of([text], GateConfig(clause_openers=frozenset(), phrase_openers=frozenset(),
                                        first_chunk_openers=frozenset())) == [text]
    assert chunks_of([text], GateConfig(opener_break_min_words=7,
                                        first_chunk_break_words=0)) == [text]
    assert chunks_of([text], GateConfig(opener_break_min_words=3, first_chunk_break_words=0)
                     )[0] == "The sky looks blue to us"


def test_clause_splitting_stops_after_a_sentence_or_enough_words() -> None:
    after_sentence = "That is true. We sell apples, pears, and plums today."
    assert chunks_of([after_sentence])[1] == "We sell apples, pears, and plums today."
    long_clauses = "One two three four, five six seven eight, nine ten eleven twelve, more here."
    assert chunks_of([long_clauses], GateConfig(clause_split_words=8)) == [
        "One two three four,",
        "five six seven eight,",
        "nine ten eleven twelve, more here.",
    ]
    assert chunks_of([long_clauses], GateConfig(clause_split_words=0))[1] == (
        "five six seven eight, nine ten eleven twelve, more here."
    )


def test_a_long_later_sentence_is_spoken_in_parts_at_its_clauses() -> None:
    # a run-on sentence would keep the speaker waiting for its full stop
    text = (
        "I am so glad you asked. I am very proud of myself for asking this today, "
        "I am so happy to have someone to talk to, and happy to chat. Bye."
    )
    assert chunks_of([text]) == [
        "I am so glad you asked.",
        "I am very proud of myself for asking this today,",
        "I am so happy to have someone to talk to,",
        "and happy to chat.",
        "Bye.",
    ]
    short = "That is fine. We sell apples, pears, and plums, all fresh. Bye."
    assert chunks_of([short])[1] == "We sell apples, pears, and plums, all fresh."


def test_a_two_word_first_clause_is_a_chunk_and_the_count_is_a_setting() -> None:
    text = "Hello there, how are you doing today? Fine."
    assert chunks_of([text])[0] == "Hello there,"
    assert chunks_of(["Oh, that is lovely. Yes."])[0] == "Oh, that is lovely."  # one word: no
    assert chunks_of([text], GateConfig(first_clause_min_words=4))[0] == (
        "Hello there, how are you doing today?")


def test_gate_resets_after_flush() -> None:
    gate = SentenceGate()
    gate.push("Well, I think that this is fine, yes. ")
    gate.flush()
    assert gate.push("Again, I think that this is fine, yes. And") == [
        "Again, I think that this is fine,",
        "yes.",
    ]


def test_speakable_text_cleans_whole_text() -> None:
    text = "# Title\n*smiles* Hello **world** 😊! See [here](http://a.b). It is 25°C."
    assert speakable_text(text) == "Title Hello world! See here. It is 25°C."


# --- properties --------------------------------------------------------------------------

# fmt: off
FRAGMENTS = [
    "Hello", "world", "the", "answer", "I", "J", "Smith", "ok", "3", "14", "2,000", "3.14",
    " ", " ", " ", "  ", "\n", "\n\n", ".", ",", "!", "?", "...", "…", ";", ":", "—", '"',
    "Dr.", "etc.", "e.g.", "U.S.", "p.m.", "No.", "*", "**", "`", "[", "](", ")", "(", "#",
    "- ", "1. ", "😊", "👍🏽", "。", "、", "！", "こんにちは", "元気", "*smiles*",
]
marked_up_text = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)
OPENER_FRAGMENTS = [
    "and", "an", "android", "because", "but", "I", "I'm", "Juliet", "it", "so", " ", " ", " ",
    "of", "offer", "in", "into", "222,750", "13,895.24", "12", "345", "1969",
    "  ", ",", ".", "!", "\n", "*", "-", "is", "blue", "sky", "very", "we", "Ice",
]
opener_text = st.lists(st.sampled_from(OPENER_FRAGMENTS), max_size=40).map("".join)
PLAIN_FRAGMENTS = [
    "Hello", "world", "the", "answer", "is", "I", "J", "R", "Smith", "3", "14", "2,000",
    "3.14", "0.5", " ", " ", " ", ".", ",", "!", "?", "...", ";", ":", "—", "No", "5",
    *ABBREVIATIONS,
]
# fmt: on
plain_text = st.lists(st.sampled_from(PLAIN_FRAGMENTS), max_size=50).map(
    lambda p: "Say " + "".join(p)
)
cut_points = st.lists(st.integers(min_value=0, max_value=10_000), max_size=30)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(marked_up_text, opener_text, st.text(max_size=80)), cuts=cut_points)
def test_any_token_split_gives_the_same_chunks(text: str, cuts: list[int]) -> None:
    whole = chunks_of([text])
    assert chunks_of(split_at(text, cuts)) == whole
    assert chunks_of(list(text)) == whole
    assert normalise(" ".join(whole)) == normalise(speakable_text(text))
    for chunk in whole:
        assert chunk == normalise(chunk) and chunk
        assert any(ch.isalnum() for ch in chunk)


def boundaries(text: str, chunks: list[str]) -> list[int]:
    """Where chunks end in plain text (chunks are its slices, less dropped punctuation)."""
    positions, pos = [], 0
    for chunk in chunks:
        for char in chunk.replace(" ", ""):
            while text[pos] != char:
                assert not text[pos].isalnum()
                pos += 1
            pos += 1
        positions.append(pos)
    return positions


@settings(max_examples=300, deadline=None)
@given(text=plain_text, cuts=cut_points)
def test_plain_text_is_kept_and_split_only_where_allowed(text: str, cuts: list[int]) -> None:
    chunks = chunks_of(split_at(text, cuts))
    # Nothing spoken is lost or reordered; only punctuation-only pieces are dropped.
    assert [ch for ch in "".join(chunks) if ch.isalnum()] == [ch for ch in text if ch.isalnum()]
    for end in boundaries(text, chunks)[:-1]:
        assert not re.search(r"\d[.,]$", text[:end]) or not text[end : end + 1].isdigit()
        assert not (text[end - 1 : end].isdigit() and re.match(r"[.,]\d", text[end:]))
        word = text[:end].split()[-1]
        assert word not in ABBREVIATIONS, (text, end)
        assert not (word == "No." and text[end:].lstrip()[:1].isdigit())
    for chunk in chunks[1:-1]:  # a sentence end, or a clause of enough words
        words = len(re.findall(r"\w+", chunk))  # "Hello .Hello;" is cleaned to "Hello.Hello;"
        at_clause = chunk[-1] in ",;:—" and words >= GateConfig().first_clause_min_words
        assert SENTENCE_END.search(chunk) or at_clause, chunks


def test_an_abbreviation_before_a_long_number_holds_together() -> None:
    """Found by the property test above: the early break before a long number ("about |
    32,000 dollars") must not fall after "Mr." or "No."."""
    for text in ("Say Hello Mr. 32,000 Hello", "See No. 12,500 now"):
        gate = SentenceGate()
        assert [*gate.push(text), *gate.flush()] == [text]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # about a second of words, then the rest of the sentence while they play
        ("I'm so glad you're enjoying the ocean tonight. My favorite thing to do is swim.",
         ["I'm so glad", "you're enjoying the ocean tonight.",
          "My favorite thing to do is swim."]),
        ("My favorite thing to do is to enjoy the night. Yes.",
         ["My favorite thing", "to do is to enjoy the night.", "Yes."]),
        ("Bees make honey from the nectar of flowers.",
         ["Bees make honey", "from the nectar of flowers."]),
        ("I’m so glad you’re here today.", ["I’m so glad", "you’re here today."]),  # noqa: RUF001
        # fewer than three words before the opener, or an opener that may be an object
        ("I love to read books.", ["I love to read books."]),
        ("I will tell you a story.", ["I will tell you a story."]),
        # a first sentence of three words or more is the first chunk; later ones are not cut
        ("That is easy. Bees make honey from the nectar of flowers.",
         ["That is easy.", "Bees make honey from the nectar of flowers."]),
        # after a first sentence under a second, the next chunk is cut early too: "Today!"
        # plays for 0.4 s, and a 12-word sentence after it took longer to synthesize
        ("Sure. Bees make honey from the nectar of flowers.",
         ["Sure.", "Bees make honey", "from the nectar of flowers."]),
        ("Today! It's a day of endless possibility, filled with joy.",
         ["Today!", "It's a day", "of endless possibility,", "filled with joy."]),
        # a name after the opener is not a new clause
        ("I just read Romeo and Juliet. Yes.", ["I just read Romeo and Juliet.", "Yes."]),
    ],
)
def test_the_first_chunk_may_end_before_an_opener_after_three_words(
    text: str, expected: list[str]
) -> None:
    assert chunks_of([text]) == expected
    assert chunks_of(list(text)) == expected  # however the tokens fall


def test_first_chunk_breaks_can_be_tuned_or_turned_off() -> None:
    text = "I'm so glad you're enjoying the ocean tonight."
    assert chunks_of([text], WHOLE_FIRST_CHUNK) == [text]
    assert chunks_of([text], GateConfig(first_chunk_break_words=4)) == [text]
    assert chunks_of([text], GateConfig(first_chunk_openers=frozenset({"the"}))) == [
        "I'm so glad you're enjoying", "the ocean tonight."]


def test_a_chunk_cut_inside_its_sentence_is_no_sentence_end() -> None:
    gate = SentenceGate()
    chunks = gate.feed("I'm so glad you're here, truly. Bees make honey from nectar.")
    chunks += gate.finish()
    assert [(c.text, c.sentence_end) for c in chunks] == [
        ("I'm so glad", False), ("you're here,", False), ("truly.", True),
        ("Bees make honey from nectar.", True)]
