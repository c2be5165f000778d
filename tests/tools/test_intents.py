"""Requests for the built-in tools are recognised by rules in English, Japanese and
Mandarin; ordinary chat is left alone."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.tools.intents import parse
from app.tools.spec import ToolCall
from tests.tools.conftest import NOW

TODAY, TOMORROW = "2024-03-12", "2024-03-13"  # NOW is 15:05 on the 12th


def _call(text: str, language: str = "en") -> tuple[str, dict[str, object], str] | None:
    call = parse(text, NOW, language)
    return None if call is None else (call.name, dict(call.arguments), call.language)


@pytest.mark.parametrize(("text", "seconds"), [
    ("set a timer for five minutes", 300), ("Set a timer for 5 minutes.", 300),
    ("set a timer for two and a half minutes", 150), ("a 10 minute timer", 600),
    ("start a 5 minute timer", 300), ("timer for 90 seconds", 90),
    ("Okay Hana, could you set a timer for twenty-five minutes please?", 1500),
    ("set a timer for an hour and a half", 5400), ("set a timer for half an hour", 1800),
    ("Thanks. Set a timer for 1 hour 30 minutes.", 5400),
    ("set a timer for 3 mins", 180), ("put on a timer for a minute", 60),
])
def test_english_timers(text: str, seconds: int) -> None:
    assert _call(text) == ("set_timer", {"seconds": seconds}, "en")


def test_a_named_timer() -> None:
    assert _call("set a pasta timer for ten minutes") == (
        "set_timer", {"seconds": 600, "label": "pasta"}, "en")
    assert _call("set a 10 minute pasta timer") == (
        "set_timer", {"seconds": 600, "label": "pasta"}, "en")
    assert _call("Set a Tyler for 3 seconds.") == ("set_timer", {"seconds": 3}, "en")  # heard
    assert _call("set a timer for ten minutes for the pasta") == (
        "set_timer", {"seconds": 600, "label": "pasta"}, "en")
    assert _call("start a timer for three minutes called soft eggs") == (
        "set_timer", {"seconds": 180, "label": "soft eggs"}, "en")


@pytest.mark.parametrize(("text", "arguments"), [
    ("remind me at 6 to call mum", {"text": "call mum", "at": "18:00", "date": TODAY}),
    ("Remind me at six to call mum.", {"text": "call mum", "at": "18:00", "date": TODAY}),
    ("remind me to call mum at 6", {"text": "call mum", "at": "18:00", "date": TODAY}),
    ("remind me tomorrow at nine to call the bank",
     {"text": "call the bank", "at": "09:00", "date": TOMORROW}),
    ("remind me at 9 am tomorrow to call the bank",
     {"text": "call the bank", "at": "09:00", "date": TOMORROW}),
    ("remind me at 3 to take my pills", {"text": "take my pills", "at": "03:00",
                                         "date": TOMORROW}),  # 15:00 has passed
    ("remind me at 6:30 pm to feed the cat",
     {"text": "feed the cat", "at": "18:30", "date": TODAY}),
    ("remind me at half past seven about the dentist",
     {"text": "about the dentist", "at": "19:30", "date": TODAY}),
    ("remind me in 20 minutes to check the oven", {"text": "check the oven", "in_minutes": 20}),
    ("remind me in an hour to stretch", {"text": "stretch", "in_minutes": 60}),
])
def test_english_reminders(text: str, arguments: dict[str, object]) -> None:
    assert _call(text) == ("set_reminder", arguments, "en")


@pytest.mark.parametrize(("text", "call"), [
    ("what time is it", ("current_time", {"what": "time"})),
    ("What's the time?", ("current_time", {"what": "time"})),
    ("do you know what time it is", ("current_time", {"what": "time"})),
    ("what's the date", ("current_time", {"what": "date"})),
    ("What day is it today?", ("current_time", {"what": "date"})),
    ("cancel the timer", ("cancel_timer", {"kind": "timer"})),
    ("stop the pasta timer", ("cancel_timer", {"kind": "timer", "label": "pasta"})),
    ("cancel the reminder to call mum",
     ("cancel_timer", {"kind": "reminder", "label": "call mum"})),
    ("what timers do I have", ("list_timers", {})),
    ("Do I have any reminders?", ("list_timers", {})),
    ("how much time is left on the timer", ("list_timers", {})),
    ("note that the wifi password is on the fridge",
     ("add_note", {"text": "the wifi password is on the fridge"})),
    ("make a note: the bins go out on Thursday",
     ("add_note", {"text": "the bins go out on thursday"})),
    ("what did I note about wifi", ("search_notes", {"query": "wifi"})),
    ("what is 17 times 23", ("calculate", {"expression": "17 * 23"})),
    ("what's seventeen times twenty three?", ("calculate", {"expression": "17 * 23"})),
    ("how much is 120 divided by 8", ("calculate", {"expression": "120 / 8"})),
])
def test_other_english_requests(text: str, call: tuple[str, dict[str, object]]) -> None:
    assert _call(text) == (*call, "en")


@pytest.mark.parametrize(("text", "call"), [
    ("5分のタイマーをセットして", ("set_timer", {"seconds": 300})),
    ("五分のタイマーをセットしてください。", ("set_timer", {"seconds": 300})),
    ("3分タイマー", ("set_timer", {"seconds": 180})),
    ("タイマーを十五分でセットして", ("set_timer", {"seconds": 900})),
    ("6時にお母さんに電話するようにリマインドして",
     ("set_reminder", {"text": "お母さんに電話する", "at": "18:00", "date": TODAY})),
    ("お母さんに6時に電話するようにリマインドして",
     ("set_reminder", {"text": "お母さんに電話する", "at": "18:00", "date": TODAY})),
    ("明日の朝九時に銀行に電話するってリマインドして",
     ("set_reminder", {"text": "銀行に電話する", "at": "09:00", "date": TOMORROW})),
    ("20分後に洗濯物を取り込むようにリマインドして",
     ("set_reminder", {"text": "洗濯物を取り込む", "in_minutes": 20})),
    ("今何時", ("current_time", {"what": "time"})),
    ("今、何時ですか？", ("current_time", {"what": "time"})),
    ("今日は何曜日", ("current_time", {"what": "date"})),
    ("タイマーをキャンセルして", ("cancel_timer", {"kind": "timer"})),
    ("リマインダーを取り消して", ("cancel_timer", {"kind": "reminder"})),
    ("タイマーは何がある？", ("list_timers", {})),
    ("WiFiのパスワードは冷蔵庫に貼ってあるってメモして",
     ("add_note", {"text": "wifiのパスワードは冷蔵庫に貼ってある"})),
    ("WiFiについて何てメモした？", ("search_notes", {"query": "wifi"})),
    ("17かける23は？", ("calculate", {"expression": "17 * 23"})),
])
def test_japanese(text: str, call: tuple[str, dict[str, object]]) -> None:
    assert _call(text, "ja") == (*call, "ja")


@pytest.mark.parametrize(("text", "call"), [
    ("设一个五分钟的计时器", ("set_timer", {"seconds": 300})),
    ("帮我设一个5分钟的计时器。", ("set_timer", {"seconds": 300})),
    ("十五分钟的倒计时", ("set_timer", {"seconds": 900})),
    ("设一个两分半钟的计时器", ("set_timer", {"seconds": 150})),
    ("随一个四秒的计时期。", ("set_timer", {"seconds": 4})),  # as Whisper heard Kokoro say it
    ("提醒我六点给妈妈打电话",
     ("set_reminder", {"text": "给妈妈打电话", "at": "18:00", "date": TODAY})),
    ("明天九点提醒我给银行打电话",
     ("set_reminder", {"text": "给银行打电话", "at": "09:00", "date": TOMORROW})),
    ("提醒我下午五点半去接孩子",
     ("set_reminder", {"text": "接孩子", "at": "17:30", "date": TODAY})),
    ("二十分钟后提醒我关火", ("set_reminder", {"text": "关火", "in_minutes": 20})),
    ("现在几点", ("current_time", {"what": "time"})),
    ("现在几点了？", ("current_time", {"what": "time"})),
    ("今天星期几", ("current_time", {"what": "date"})),
    ("取消计时器", ("cancel_timer", {"kind": "timer"})),
    ("取消提醒", ("cancel_timer", {"kind": "reminder"})),
    ("我有哪些计时器", ("list_timers", {})),
    ("记一下：wifi密码在冰箱上", ("add_note", {"text": "wifi密码在冰箱上"})),
    ("我关于wifi记了什么", ("search_notes", {"query": "wifi"})),
    ("17乘以23等于多少", ("calculate", {"expression": "17 * 23"})),
])
def test_mandarin(text: str, call: tuple[str, dict[str, object]]) -> None:
    assert _call(text, "zh") == (*call, "zh")


def test_the_persona_language_is_only_tried_first() -> None:
    assert _call("what time is it", "ja") == ("current_time", {"what": "time"}, "en")
    assert _call("现在几点", "en") == ("current_time", {"what": "time"}, "zh")


CHAT = [
    "I set the table for five people", "my mum reminds me of you", "what a time to be alive",
    "I had a great time", "the timer on my oven is broken", "that reminds me of a song",
    "I need to remember to call mum", "can you remind me what we talked about",
    "what is the meaning of life", "what is love", "what's 2024 going to bring",
    "I noted that you like tea", "time flies", "do you have time to talk",
    "I'll set an alarm myself", "five minutes ago I was asleep", "I made a note of it",
    "the date was lovely", "what's up", "I cancelled my gym membership",
    "we went to see a film about time travel", "how are you", "tell me a story",
    "my sister set up a timer app", "remind me", "set it for later", "what is 5",
    "I'd like to stop thinking about work", "it's about time", "what day is Christmas",
    "母は私にあなたを思い出させる", "時間がない", "タイマーはキャンセルしないで",
    "今日はいい天気ですね", "五人分のテーブルを用意した", "何時に寝た？",
    "我有时间", "时间过得真快", "我妈妈提醒我要早睡", "不要取消计时器", "今天天气很好",
    "我设了一个目标", "五分钟前我还在睡觉",
]


@pytest.mark.parametrize("text", CHAT)
def test_ordinary_chat_is_left_alone(text: str) -> None:
    for language in ("en", "ja", "zh"):
        assert parse(text, NOW, language) is None, (text, language)


@settings(max_examples=300)
@given(st.text(max_size=120), st.sampled_from(["en", "ja", "zh", "fr"]))
def test_any_text_parses_without_error(text: str, language: str) -> None:
    call = parse(text, NOW, language)
    assert call is None or isinstance(call, ToolCall)


words = st.sampled_from(["set", "a", "timer", "for", "five", "minutes", "remind", "me", "at",
                         "6", "to", "call", "mum", "cancel", "the", "what", "time", "is", "it",
                         "note", "that", "and", "half", "tomorrow", "in", "20", "times", "17",
                         "タイマー", "5分", "の", "提醒我", "六点", "计时器", "取消", "。", "?"])


@settings(max_examples=300)
@given(st.lists(words, max_size=12))
def test_word_salad_parses_without_error_and_any_call_is_valid(parts: list[str]) -> None:
    call = parse(" ".join(parts), NOW)
    if call is not None and call.name == "set_timer":
        assert isinstance(call.arguments["seconds"], int) and call.arguments["seconds"] >= 1
