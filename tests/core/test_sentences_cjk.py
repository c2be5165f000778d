"""The sentence gate on Japanese and Chinese replies, streamed in 1-3 character tokens the
way a small LLM's tokenizer hands them out: the first chunk ends at the first comma-like
mark once it holds a few characters, later ones at sentence ends (or at a clause when
long), and numbers, quotes and ellipses are never cut."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.core.gate_config import GateConfig
from app.core.sentences import SentenceGate, ends_sentence


def tokens(text: str, seed: int = 0) -> list[str]:
    """``text`` in pieces of 1 to 3 characters (CJK tokenizers give about that)."""
    rng, pieces, pos = random.Random(seed), [], 0
    while pos < len(text):
        size = rng.randint(1, 3)
        pieces.append(text[pos : pos + size])
        pos += size
    return pieces


def stream(pieces: list[str], config: GateConfig | None = None) -> list[str]:
    gate = SentenceGate(config)
    out: list[str] = []
    for piece in pieces:
        out += gate.push(piece)
    return out + gate.flush()


def first_chunk_after(pieces: list[str]) -> tuple[int, str]:
    """How many tokens the gate needed before its first chunk, and that chunk."""
    gate = SentenceGate()
    for count, piece in enumerate(pieces, start=1):
        out = gate.push(piece)
        if out:
            return count, out[0]
    raise AssertionError("no chunk before the end of the reply")


# fmt: off
REPLIES = [
    (  # a first clause of five characters goes out on its own
        "そうですね、今日はとても良い天気なので、公園を散歩しませんか？",
        ["そうですね、", "今日はとても良い天気なので、", "公園を散歩しませんか？"],
    ),
    (  # a two-character first clause is too short: it waits for the next mark
        "はい、分かりました。明日の朝、駅で会いましょう。",
        ["はい、分かりました。", "明日の朝、駅で会いましょう。"],
    ),
    (  # after a sentence, a clause ends a chunk only once it is long
        "いいね！週末は天気がいいらしいから、朝早く起きて、山に登って、お弁当を食べようよ。",
        [
            "いいね！", "週末は天気がいいらしいから、朝早く起きて、",
            "山に登って、お弁当を食べようよ。",
        ],
    ),
    (  # numbers with a decimal point and a thousands comma stay whole
        "円周率は3.14で、全部で1,000円です。",
        ["円周率は3.14で、", "全部で1,000円です。"],
    ),
    (  # a quote followed by its particle is one sentence
        "彼女は「ありがとう。」と言いました。それから帰りました。",
        ["彼女は「ありがとう。」と言いました。", "それから帰りました。"],
    ),
    (  # an ellipsis is a pause, not an end
        "えっと……そうだなあ、明日なら大丈夫だよ。",
        ["えっと……そうだなあ、", "明日なら大丈夫だよ。"],
    ),
    (  # no comma: the first chunk ends after a particle once it is a second long
        "週末に友達と映画を見に行きました。楽しかったです。",
        ["週末に友達と", "映画を見に行きました。", "楽しかったです。"],
    ),
    (  # after a katakana word; later chunks wait for their marks
        "東京タワーに行ったことがありますか？夜景が本当にきれいですよ。",
        ["東京タワーに", "行ったことがありますか？", "夜景が本当にきれいですよ。"],
    ),
    (  # で that begins できる or です, and には / では, are not particles ending a phrase
        "勉強できるようになりました。会議ではみんなが静かでした。",
        ["勉強できるようになりました。", "会議ではみんなが静かでした。"],
    ),
    (  # after hiragana the same characters are inside words: no cut
        "こんなところがあるなんて知らなかった。",
        ["こんなところがあるなんて知らなかった。"],
    ),
    (
        "今天天气真不错，我们去公园走走吧。还是你想在家看电影？",
        ["今天天气真不错，", "我们去公园走走吧。", "还是你想在家看电影？"],
    ),
    (
        "好的，我明白了。明天见！",
        ["好的，我明白了。", "明天见！"],
    ),
    (
        "这本书原价1,000元，打八折是800元。圆周率约等于3.14。",
        ["这本书原价1,000元，", "打八折是800元。", "圆周率约等于3.14。"],
    ),
    (
        "他说：“明天见。”然后就走了。",
        ["他说：“明天见。”", "然后就走了。"],
    ),
    (
        "嗯……让我想想。好吧，就这么定了！",
        ["嗯……让我想想。", "好吧，就这么定了！"],
    ),
    (  # half-width marks typed without a space, as small models often do
        "真的吗?太好了!我们周末一起去吧,我请客.",
        ["真的吗?", "太好了!", "我们周末一起去吧,我请客."],
    ),
    (
        "哇,这家店的蛋糕真好吃,下次还来.",
        ["哇,这家店的蛋糕真好吃,", "下次还来."],
    ),
]
# fmt: on


@pytest.mark.parametrize(("text", "expected"), REPLIES, ids=lambda v: str(v)[:12])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_streamed_cjk_replies_are_chunked_like_a_native_reader_would(
    text: str, expected: list[str], seed: int
) -> None:
    assert stream(tokens(text, seed)) == expected
    assert stream([text]) == expected


def test_first_japanese_chunk_leaves_as_soon_as_the_next_token_confirms_it() -> None:
    pieces = ["そう", "です", "ね", "、", "今日", "は", "とて", "も", "良い", "天気", "です",
              "ね。"]
    count, chunk = first_chunk_after(pieces)
    assert chunk == "そうですね、"
    assert count == 5  # the token after the comma, not the end of the sentence


def test_first_chinese_chunk_leaves_at_the_first_long_enough_clause() -> None:
    pieces = ["好", "的", "，", "今天", "天气", "真", "不错", "，", "我们", "去", "公园", "吧。"]
    count, chunk = first_chunk_after(pieces)
    assert chunk == "好的，今天天气真不错，"
    assert count == 9


def test_a_long_run_on_chinese_sentence_is_spoken_in_parts() -> None:
    text = ("我们先去超市买一些水果和蔬菜，然后回家把房间打扫得干干净净，"
            "晚上再请几个好朋友过来一起吃火锅聊天，一直聊到很晚才结束。")
    chunks = stream(tokens(text))
    assert "".join(chunks) == text
    assert len(chunks) >= 3
    assert all(len(chunk) <= 40 for chunk in chunks)


def test_short_clauses_later_in_a_reply_stay_with_their_sentence() -> None:
    # no early clauses after the first chunk, and no first chunk cut after a particle
    config = GateConfig(clause_split_chars=0, first_chunk_break_words=0)
    text = "今日は、雨が降りそうだね。傘を、持っていってね。"
    assert stream(tokens(text), config) == ["今日は、雨が降りそうだね。", "傘を、持っていってね。"]


def test_a_number_split_across_tokens_is_not_cut() -> None:
    gate = SentenceGate()
    assert gate.push("全部で1") == []
    assert gate.push(",") == []
    assert gate.push("000円で、") == []
    assert gate.push("3.") == ["全部で1,000円で、"]
    assert gate.push("5キロです。") == []
    assert gate.flush() == ["3.5キロです。"]


CJK_FRAGMENTS = [
    "今日", "は", "天気", "が", "いい", "ね", "我们", "去", "公园", "吧", "「", "」", "“", "”",
    "。", "、", "，", "！", "？", "……", "!", "?", ",", ".", "3", "14", "1,000", "3.14",
    " ", "と", "言った", "そうですね", "好的",
]
cjk_text = st.lists(st.sampled_from(CJK_FRAGMENTS), max_size=40).map("".join)
cut_points = st.lists(st.integers(min_value=0, max_value=400), max_size=30)


@settings(max_examples=300, deadline=None)
@given(text=cjk_text, cuts=cut_points)
def test_any_split_of_a_cjk_reply_gives_the_same_chunks(text: str, cuts: list[int]) -> None:
    # a reply opening with "3. " is a numbered list's first item: its marker is markup
    assume(not re.match(r"\s*\d{1,3}[.)](?:\s|$)", text))
    bounds = [0, *sorted({c % (len(text) + 1) for c in cuts}), len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    whole = stream([text])
    assert stream(pieces) == whole
    assert stream(list(text)) == whole
    spoken = "".join(whole).replace(" ", "")
    assert [c for c in spoken if c.isalnum()] == [c for c in text if c.isalnum()]
    for chunk, after in itertools.pairwise(whole):  # never inside "3,000" or "3.14"
        inside_a_number = (re.search(r"\d$", chunk.rstrip(".,")) and chunk[-1] in ".,"
                           and after[:1].isdigit() and chunk[-2:] + after[:1] in text)
        assert not inside_a_number, (chunk, after)  # "3, 3" (a space) is two numbers


def test_clause_chunks_are_not_sentences_for_the_reply_cap() -> None:
    chunks = stream(tokens("そうですね、今日はとても良い天気なので、公園を散歩しませんか？"))
    assert [ends_sentence(chunk) for chunk in chunks] == [False, False, True]
    assert ends_sentence("他说：“明天见。”") and ends_sentence("Hello there.")
    assert not ends_sentence("Well, I think that the answer is simple,")


def test_a_looping_run_of_marks_ends_the_chunk_and_is_not_spoken() -> None:
    """SmolLM2 answered a Mandarin question with the question and 150 "？": the chunk held
    the whole loop and the voice spent 28 s on it."""
    gate = SentenceGate()
    chunks: list[str] = []
    for piece in ["你最喜欢的", "季节是什么", *["？"] * 150]:
        chunks += gate.push(piece)
    assert chunks and chunks[0].startswith("你最喜欢的季节是什么？")
    assert len(chunks[0]) <= len("你最喜欢的季节是什么？？？")
    chunks += gate.flush()
    assert all(any(ch.isalnum() for ch in chunk) for chunk in chunks)
    assert len(chunks) == 1
