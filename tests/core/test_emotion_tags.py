"""Emotion tags (app.core.emotion): cut out of the spoken text by the sentence gate, in any
token split, and carried with the chunk they open; a missing, unknown or malformed tag
falls back to the resting face (None) and is never spoken."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.emotion import EMOTION_WORDS, Emotion, strip_tags
from app.core.gate_config import GateConfig
from app.core.sentences import SentenceGate, Spoken, speakable_text
from tests.core.test_sentences import cut_points, split_at

E = Emotion


def spoken(tokens: list[str]) -> list[Spoken]:
    gate = SentenceGate()
    out: list[Spoken] = []
    for token in tokens:
        out += gate.feed(token)
    return out + gate.finish()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[happy] Oh, that is lovely! [sad] But I will miss you, really.",
         [("Oh, that is lovely!", E.HAPPY), ("But I will miss you, really.", E.SAD)]),
        ("(Happy) Hello there! <SURPRISED> Wow, really?",
         [("Hello there!", E.HAPPY), ("Wow, really?", E.SURPRISED)]),
        ("[joy] Nice. [smirk] I knew you would say that.",  # synonyms
         [("Nice.", E.HAPPY), ("I knew you would say that.", E.SMUG)]),
        ("【thinking】 It could be the blue one.", [("It could be the blue one.", E.THINKING)]),
        ("[teasing] Oh really? [embarrassed] Stop it! [angry] Hey!",
         [("Oh really?", E.SMUG), ("Stop it!", E.EMBARRASSED), ("Hey!", E.ANGRY)]),
        ("No tags at all. Just words.", [("No tags at all.", None), ("Just words.", None)]),
        ("[whispers] Come closer. [hapy] Closer still.",  # unknown: dropped, resting face
         [("Come closer.", None), ("Closer still.", None)]),
        ("[happy Hello there, my friend.", [("Hello there,", E.HAPPY), ("my friend.", E.HAPPY)]),
        ("[emotion: sad] Oh well, maybe next time.",
         [("Oh well,", E.SAD), ("maybe next time.", E.SAD)]),
        ("I am [angry] not pleased with this.",  # the first chunk cut: both parts keep it
         [("I am not pleased", E.ANGRY), ("with this.", E.ANGRY)]),
        ("*smiles* Nice to see you again today.",
         [("Nice to see you again today.", E.HAPPY)]),
        ("[HAPPY]こんにちは！[sad]でも、今日はちょっと疲れました。",
         [("こんにちは！", E.HAPPY), ("でも、今日はちょっと疲れました。", E.SAD)]),
        # not tags: a link, a citation, a name in brackets mid-sentence, long brackets
        ("See [the guide](http://a.b) for it.", [("See the guide", None), ("for it.", None)]),
        ("It says so [1] in the book.", [("It says so [1]", None), ("in the book.", None)]),
        ("I met (Anna) at the cafe today.", [("I met (Anna)", None), ("at the cafe today.", None)]),
        ("(Happy birthday) to you!", [("(Happy birthday) to you!", None)]),
        ("[happy]", []),
        ("[happy](", []),
        ("[happy] (x) ok.", [("ok.", E.HAPPY)]),
        ("[neutral], [happy], [sad]", []),  # a model reciting the list says nothing
    ],
)
def test_examples(text: str, expected: list[tuple[str, Emotion | None]]) -> None:
    assert [(s.text, s.emotion) for s in spoken([text])] == expected
    assert [(s.text, s.emotion) for s in spoken(list(text))] == expected


def test_a_sentence_keeps_its_emotion_across_its_clauses_and_the_next_untagged_one() -> None:
    chunks = spoken(["[sad] Well, I tried my best, but it did not work. It never does."])
    assert [c.emotion for c in chunks] == [E.SAD] * len(chunks) and len(chunks) > 1


def test_a_chunk_too_short_to_speak_alone_keeps_its_own_emotion() -> None:
    config = GateConfig(min_chunk_chars=6)
    gate = SentenceGate(config)
    chunks = gate.feed("[happy] Oh! [sad] I knew it would rain today.") + gate.finish()
    assert chunks == [Spoken("Oh! I knew it would rain today.", E.HAPPY)]


def test_the_gate_starts_each_reply_at_rest() -> None:
    gate = SentenceGate()
    gate.feed("[angry] Go away now.")
    assert gate.finish() == [Spoken("Go away now.", E.ANGRY)]
    assert gate.feed("Hello again.\n") == [Spoken("Hello again.", None)]


def test_strip_tags_on_a_whole_text() -> None:
    assert strip_tags("[happy] Hi there! (sad) Bye.") == "Hi there! Bye."
    assert strip_tags("Plain  text stays as it is.") == "Plain  text stays as it is."
    assert strip_tags("See [docs](http://x).") == "See [docs](http://x)."
    assert speakable_text("[happy] Hi there! (sad) Bye.") == "Hi there! Bye."


# --- properties --------------------------------------------------------------------------

TAG_FRAGMENTS = [
    "[", "]", "(", ")", "<", ">", "【", "】", "happy", "HAPPY", "hap", "py", "sad", "joy",
    "smirk", "angry", "whispers", "emotion:", " ", " ", " ", ".", "!", "?", ",", "\n",
    "[happy]", "(sad)", "<surprised>", "[thinking] ", "[teasing]", "[embarrassed] ",
    "Hello", "there", "I", "am", "fine", "the", "answer", "is", "3", "*smiles*", "*", "](",
    "http://x", "こんにちは", "。", "Anna",
]
tagged_text = st.lists(st.sampled_from(TAG_FRAGMENTS), max_size=40).map("".join)
_WORDS = "|".join(re.escape(word) for word in EMOTION_WORDS)
KNOWN_TAG = re.compile(rf"[\[(<【（［]\s*(?:{_WORDS})\s*[\])>】）］]", re.IGNORECASE)  # noqa: RUF001


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(tagged_text, st.text(max_size=60)), cuts=cut_points)
def test_any_token_split_gives_the_same_chunks_and_emotions(text: str, cuts: list[int]) -> None:
    whole = spoken([text])
    assert spoken(split_at(text, cuts)) == whole
    assert spoken(list(text)) == whole
    for chunk in whole:
        assert not KNOWN_TAG.search(chunk.text), (text, chunk)
        assert chunk.emotion is None or isinstance(chunk.emotion, Emotion)


@settings(max_examples=200, deadline=None)
@given(text=tagged_text)
def test_a_tag_at_a_sentence_start_is_never_spoken(text: str) -> None:
    for chunk in spoken([text]):
        assert not re.match(r"[\[(<【]\s*[a-z]+\s*[\])>】]", chunk.text), (text, chunk)
