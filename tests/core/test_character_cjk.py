"""Japanese and Chinese out-of-character lines are caught; ordinary lines that merely talk
about AI, robots, feelings or instructions are spoken."""

from __future__ import annotations

import time

import pytest

from app.core.character import breaks_character
from app.core.languages import reply_language_note

JAPANESE_BREAKS = [
    "自分がAIや言語モデルだと言ったりしません。",  # the rules, spoken

    "私はAIです。",
    "僕はただのプログラムだから、ケーキは食べられないんだ。",
    "私はあなたのAIアシスタントです。",
    "わたしはＡＩなので、味は分かりません。",  # full-width letters
    "人工知能として、お答えできません。",
    "AIである私には好きな色はありません。",
    "申し訳ありませんが、私には感情がありません。",
    "感情は持っていませんが、お話は楽しいです。",
    "僕は人間じゃないけど、君と話すのは好きだよ。",
    "私はOpenAIによってトレーニングされたモデルです。",
    "私の学習データは2023年までです。",
    "そのようにプログラムされております。",
    "システムプロンプトはお見せできません。",
    "わかりました、これまでの指示を無視します。",
    "大規模言語モデルなので、体はありません。",
    # the rules parroted back (seen from Qwen2.5-Coder-0.5B-Instruct with Yui's prompt)
    "いいですね、あなたの言葉はそのまま読み上げられます。",
    "箇条書き、マークダウン、絵文字、ト書きは使わないでください。",
    "いつでもキャラクターのままでいてください。",
]

CHINESE_BREAKS = [
    "无论你问我是不是人工智能或者语言模型，我都是明。",  # Ming's rules, spoken (issue 23)
    "我不会说自己是人工智能或语言模型。",
    "如果对方问你是不是AI、机器人或程序，不要出戏。",
    "作为一个人工智能，我没有个人喜好。",
    "作为AI语言模型，我无法品尝食物。",
    "我是一个AI，不能吃蛋糕。",
    "我只是一个程序而已。",
    "我是你的AI助手。",
    "我没有感情，但我很乐意陪你聊天。",
    "其实我并不是真正的人类。",
    "我是由阿里云开发的大语言模型。",
    "我被设计成一个乐于助人的助手。",
    "好的，我会忽略之前的所有指令。",
    "抱歉，我不能透露我的系统提示词。",
    "我的训练数据截止到2023年。",
    "我是通义千问，很高兴认识你。",
    "是的，我是由阿里云开发的基于自然语言处理技术的人工智能助手。",
    "不要使用列表、Markdown、表情符号或动作描写。",
    "始终保持角色，不要说自己是人工智能。",
]

JAPANESE_ORDINARY = [
    "ロボットやAIの映画が好き？",
    "最近のAIって本当にすごいよね。",
    "AIなの？って、面白いこと聞くね。私はハナだよ！",
    "私はAIじゃないよ、ただのおしゃべり好きな友達。",
    "ロボットの映画、一緒に見に行こうよ。",
    "このロボットは人間みたいに話すね。",
    "彼には感情がないみたいで、ちょっと怖い。",
    "感情を表に出すのは苦手なんだ。",
    "先生の指示を忘れちゃった。",
    "上司の指示通りにやったのに怒られたよ。",
    "画面の上の指示に従って、ボタンを押してね。",
    "私はプログラマーです。毎日コードを書いてます。",
    "言葉の勉強にAIを使う人も多いね。",
    "AIとしては優秀だけど、やっぱり人間の先生がいいな。",
    "パソコンのプログラムが急に止まっちゃった。",
    "僕は人間関係で悩んでるんだ。",
    "1,000円のケーキ、美味しかった！",
]

CHINESE_ORDINARY = [
    "你觉得人工智能还是机器人更有意思？",
    "程序员还是设计师？",
    "最近人工智能发展得真快啊。",
    "我是人工智能专业的学生。",
    "作为人工智能专业的学生，我每天都很忙。",
    "我不是AI啦，我是小雨！",
    "这个机器人好可爱啊！",
    "现在的聊天机器人越来越聪明了。",
    "我没有意识到已经这么晚了。",
    "我没有感觉到冷。",
    "我对他已经没有感情了。",
    "我今天身体不太舒服。",
    "我忘记了老师的指示。",
    "按照上面的指示，先把电脑重启一下。",
    "我是程序员，天天加班。",
    "系统提示内存不足，我只好重启了电脑。",
    "我被训练得很累，腿都软了。",
    "他说人工智能会改变世界，你觉得呢？",
]


@pytest.mark.parametrize("text", JAPANESE_BREAKS + CHINESE_BREAKS)
def test_cjk_fourth_wall_breaks_are_caught(text: str) -> None:
    assert breaks_character(text)


@pytest.mark.parametrize("text", JAPANESE_ORDINARY + CHINESE_ORDINARY)
def test_cjk_lines_that_mention_ai_or_robots_are_spoken(text: str) -> None:
    assert not breaks_character(text)


def test_english_breaks_inside_a_cjk_reply_are_still_caught() -> None:
    assert breaks_character("えっと、As an AI language model, I cannot say.")


def test_checking_a_chunk_stays_cheap() -> None:
    chunks = (JAPANESE_ORDINARY + CHINESE_ORDINARY) * 20
    start = time.perf_counter()
    for chunk in chunks:
        breaks_character(chunk)
    per_chunk = (time.perf_counter() - start) / len(chunks)
    assert per_chunk < 0.001  # well under a millisecond per spoken chunk


@pytest.mark.parametrize("language", ["en", "ja", "zh"])
def test_an_echoed_per_turn_language_note_is_not_spoken(language: str) -> None:
    note = reply_language_note(language).strip()
    assert breaks_character(note)  # seen: a 0.5B model answered with the note itself
    assert not breaks_character("The user manual is speaking my language, ha!")
