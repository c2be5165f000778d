"""What the tools say: short confirmations and the words a timer rings with, in English,
Japanese and Mandarin (any other language gets English). Numbers, times and durations
are written out as a voice reads them ("five minutes", "五分", "五分钟").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from app.tools.numbers import cjk_numeral, en_words
from app.tools.records import Reminder

_WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "ja": ("月曜日", "火曜日", "水曜日", "木曜日", "金曜日", "土曜日", "日曜日"),
    "zh": ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
}
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
MAX_LISTED = 5


def lang(code: str) -> str:
    base = code.split("-")[0].lower()
    return base if base in ("ja", "zh") else "en"


def num(n: int, language: str) -> str:
    return {"ja": cjk_numeral(n), "zh": cjk_numeral(n, chinese=True)}.get(lang(language),
                                                                          en_words(n))


def duration(seconds: float, language: str = "en") -> str:
    """How long, as said: 150 -> "two and a half minutes", "二分半", "两分半钟"."""
    total = max(1, round(seconds))
    h, m, s = total // 3600, total // 60 % 60, total % 60
    language = lang(language)
    if language == "ja":
        half = "半" if s == 30 and m else ""
        return (f"{num(h, 'ja')}時間" * bool(h) + f"{num(m, 'ja')}分" * bool(m) + half
                + f"{num(s, 'ja')}秒" * bool(s and not half))
    if language == "zh":
        if s == 30 and m:
            return f"{num(h, 'zh')}小时" * bool(h) + f"{num(m, 'zh')}分半钟"
        minutes = f"{num(m, 'zh')}分" + ("钟" if not s else "")
        return (f"{num(h, 'zh')}小时" * bool(h) + minutes * bool(m)
                + f"{num(s, 'zh')}秒" * bool(s))
    if s == 30 and m and not h:
        return f"{en_words(m)} and a half minutes"
    parts = [f"{en_words(n)} {unit}{'s' * (n != 1)}"
             for n, unit in ((h, "hour"), (m, "minute"), (s, "second")) if n]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def clock(at: datetime, language: str = "en", period: bool = True) -> str:
    """A time of day: "six o'clock in the evening", "午後六時", "晚上六点"."""
    hour, minute = at.hour, at.minute
    language = lang(language)
    if language == "ja":
        words = f"{num(hour % 12, 'ja')}時" + ("半" if minute == 30 else
                                              f"{num(minute, 'ja')}分" * bool(minute))
        return ("午前" if hour < 12 else "午後") * period + words.replace("〇時", "零時")
    if language == "zh":
        twelve = hour % 12 or 12
        tail = "半" if minute == 30 else f"{'零' * (minute < 10)}{num(minute, 'zh')}分" * bool(
            minute)
        when = ("凌晨" if hour < 6 else "早上" if hour < 9 else "上午" if hour < 12
                else "中午" if hour < 13 else "下午" if hour < 18 else "晚上")
        return when * period + ("两" if twelve == 2 else num(twelve, "zh")) + "点" + tail
    if minute == 0 and hour in (0, 12) and period:
        return "midnight" if hour == 0 else "noon"
    words = en_words(hour % 12 or 12) + (" o'clock" if minute == 0 else
                                         f" oh {en_words(minute)}" if minute < 10 else
                                         f" {en_words(minute)}")
    when = ("in the morning" if hour < 12 else "in the afternoon" if hour < 18
            else "in the evening")
    return words + (" " + when) * period


def day(at: datetime, now: datetime, language: str = "en") -> str:
    """"" for today, "tomorrow", or the weekday / date."""
    language = lang(language)
    days = (at.date() - now.date()).days
    if days <= 0:
        return ""
    if days == 1:
        return {"ja": "明日", "zh": "明天"}.get(language, "tomorrow")
    weekday = _WEEKDAYS[language][at.weekday()]
    if days < 7:
        return weekday if language != "en" else f"on {weekday}"
    return date(at, language) if language != "en" else f"on {date(at, language)}"


def date(at: datetime, language: str = "en") -> str:
    language = lang(language)
    weekday = _WEEKDAYS[language][at.weekday()]
    if language in ("ja", "zh"):
        sep = "、" if language == "ja" else "，"
        return f"{num(at.month, language)}月{num(at.day, language)}日{sep}{weekday}"
    return f"{weekday}, {at.day} {_MONTHS[at.month - 1]} {at.year}"


def _when(at: datetime, now: datetime, language: str) -> str:
    first = day(at, now, language)
    if lang(language) == "en":
        return f"{first} at {clock(at, 'en')}".strip()
    return first + clock(at, language)


def timer_set(seconds: float, label: str, language: str = "en") -> str:
    span = duration(seconds, language)
    match lang(language):
        case "ja":
            return f"{span}の{label or 'タイマー'}をセットしました。" if not label else (
                f"{label}のタイマーを{span}でセットしました。")
        case "zh":
            return f"好的，{span}的{label}计时器已设置。"
        case _:
            return f"Timer set for {span}." if not label else f"{label} timer set for {span}."


def reminder_set(due: datetime, now: datetime, text: str, language: str = "en") -> str:
    when = _when(due, now, language)
    match lang(language):
        case "ja":
            return f"{when}に「{text}」とお知らせします。"
        case "zh":
            return f"好的，我会在{when}提醒你{text}。"
        case _:
            return f"OK, I'll remind you {when} to {_bare(text)}."


def _bare(text: str) -> str:
    return text[3:] if text.lower().startswith("to ") else text


def fired(reminder: Reminder, at: datetime) -> str:
    """What is said when it rings (``at``: its due time in the user's zone)."""
    language, label = lang(reminder.language), reminder.label
    if reminder.kind == "timer":
        span = duration(reminder.duration_s or 0, language)
        if language == "ja":
            return f"{label or span}のタイマーが終わりました。"
        if language == "zh":
            return f"{label or span}的计时器时间到了。"
        if label:
            return f"Your {label} timer is done."
        single = span.replace("seconds", "second").replace("minutes", "minute").replace(
            "hours", "hour")
        return f"Your {single} timer is done." if " and " not in span else (
            f"Your timer for {span} is done.")
    if language == "ja":
        suffix = "時間です" if label[-1:] in "うくすつぬぶむぐる" else "の時間です"
        return f"{clock(at, 'ja', period=False)}です。{label}{suffix}。"
    if language == "zh":
        return f"{clock(at, 'zh', period=False)}了，该{label}了。"
    said = clock(at, "en", period=False)
    if label.lower().startswith("about "):
        return f"It's {said}: a reminder {label}."
    return f"It's {said}: time to {_bare(label)}."


def _item(r: Reminder, now: datetime, language: str) -> str:
    left = max(1.0, r.due_at - now.timestamp())
    left = left if left < 90 else math.ceil(left / 60) * 60
    due = datetime.fromtimestamp(r.due_at, now.tzinfo)
    match lang(language), r.kind:
        case "ja", "timer":
            return f"残り{duration(left, 'ja')}の{r.label or ''}タイマー"
        case "ja", _:
            return f"{_when(due, now, 'ja')}のリマインダー（{r.label}）"
        case "zh", "timer":
            return f"一个还剩{duration(left, 'zh')}的{r.label}计时器"
        case "zh", _:
            return f"{_when(due, now, 'zh')}的提醒：{r.label}"
        case _, "timer":
            return f"a {r.label + ' ' if r.label else ''}timer with {duration(left)} left"
        case _:
            return f"a reminder {_when(due, now, 'en')} to {_bare(r.label)}"


def listing(reminders: Sequence[Reminder], now: datetime, language: str = "en") -> str:
    language = lang(language)
    if not reminders:
        return {"ja": "タイマーもリマインダーもありません。",
                "zh": "你现在没有计时器，也没有提醒。"}.get(
            language, "You have no timers or reminders.")
    items = [_item(r, now, language) for r in reminders[:MAX_LISTED]]
    more = len(reminders) - len(items)
    count = num(len(reminders), language)
    if language == "ja":
        return f"{count}件あります：" + "、".join(items) + (f"、ほか{num(more, 'ja')}件" * bool(
            more)) + "。"
    if language == "zh":
        return f"你有{count}个：" + "；".join(items) + (f"；还有{num(more, 'zh')}个" * bool(
            more)) + "。"
    if more:
        items.append(f"{en_words(more)} more")
    joined = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    return f"You have {joined}." if len(reminders) == 1 else f"You have {count}: {joined}."


def cancelled(reminder: Reminder, language: str = "en") -> str:
    timer = reminder.kind == "timer"
    match lang(language):
        case "ja":
            return ("タイマー" if timer else "リマインダー") + "をキャンセルしました。"
        case "zh":
            return ("计时器" if timer else "提醒") + "已取消。"
        case _:
            return "Timer cancelled." if timer else (
                f"Reminder to {_bare(reminder.label)} cancelled.")


def nothing_to_cancel(language: str = "en") -> str:
    return {"ja": "キャンセルするタイマーはありません。", "zh": "没有可以取消的计时器。"}.get(
        lang(language), "There's nothing to cancel.")


def which_one(reminders: Sequence[Reminder], now: datetime, language: str = "en") -> str:
    ask = {"ja": "どれをキャンセルしますか？", "zh": "要取消哪一个？"}.get(
        lang(language), "Which one should I cancel?")
    return joined(listing(reminders, now, language), ask, language)


def time_now(now: datetime, language: str = "en") -> str:
    return {"ja": f"今、{clock(now, 'ja')}です。", "zh": f"现在是{clock(now, 'zh')}。"}.get(
        lang(language), f"It's {clock(now, 'en')}.")


def date_today(now: datetime, language: str = "en") -> str:
    return {"ja": f"今日は{date(now, 'ja')}です。", "zh": f"今天是{date(now, 'zh')}。"}.get(
        lang(language), f"Today is {date(now, 'en')}.")


def noted(language: str = "en") -> str:
    return {"ja": "メモしました。", "zh": "好的，记下了。"}.get(lang(language), "Noted.")


def found_notes(texts: Sequence[str], language: str = "en") -> str:
    if not texts:
        return {"ja": "それについてのメモはありません。", "zh": "没有找到相关的笔记。"}.get(
            lang(language), "I don't have a note about that.")
    joined = {"ja": "。", "zh": "；"}.get(lang(language), ". ").join(texts)
    return {"ja": f"メモによると：{joined}。", "zh": f"你记过：{joined}。"}.get(
        lang(language), f"You noted: {joined}.")


def not_saved(language: str = "en") -> str:
    return {"ja": "ただ、ディスクに保存できなかったので、再起動すると消えます。",
            "zh": "不过没能保存到磁盘，重启后会丢失。"}.get(
        lang(language), "I couldn't save it to disk, so it lasts only until I'm closed.")


def result(value: str, language: str = "en") -> str:
    return {"ja": f"答えは{value}です。", "zh": f"等于{value}。"}.get(lang(language),
                                                              f"That's {value}.")


def joined(first: str, second: str, language: str = "en") -> str:
    """Two sentences, with the space English puts between them."""
    return first + (" " if lang(language) == "en" else "") + second


def server_failed(server: str, language: str = "en") -> str:
    """A user's tool server crashed, refused or answered with junk (said aloud)."""
    return {"ja": f"すみません、{server}のツールが今は使えません。",
            "zh": f"抱歉，{server}工具现在用不了。"}.get(
        lang(language), f"Sorry, the {server} tool isn't working right now.")


def server_too_slow(server: str, language: str = "en") -> str:
    """A user's tool server did not answer in time (said aloud)."""
    return {"ja": f"すみません、{server}のツールから時間内に返事がありませんでした。",
            "zh": f"抱歉，{server}工具没有及时回应。"}.get(
        lang(language), f"Sorry, the {server} tool took too long to answer.")
