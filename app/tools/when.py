"""Durations and times of day as people say them, in English, Japanese and Mandarin.

All functions take text already lower-cased and NFKC-normalized (full-width digits are
ASCII) and answer None for anything they do not fully understand: a rule that guesses
sets the wrong timer.

An hour without am/pm is the rule the tests pin down: on its own ("at 6") it is the next
time the clock shows that hour, 6 am or 6 pm, whichever comes first after now; with a day
("tomorrow at 6") 7 to 11 are morning and 12 to 6 afternoon or evening, as people mean
them when they plan a day. 13 to 23 and 0 are the 24-hour clock.
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta

from app.tools.numbers import CJK_NUMBER, EN_NUMBER, ONES, cjk_number, en_number

_EN_UNITS = {"hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600, "h": 3600,
             "minute": 60, "minutes": 60, "min": 60, "mins": 60, "m": 60,
             "second": 1, "seconds": 1, "sec": 1, "secs": 1, "s": 1}
_EN_PART = re.compile(
    rf"(?P<n>{EN_NUMBER})(?P<half1>\s+and\s+a\s+half)?[\s-]*"
    r"(?P<unit>hours?|hrs?|minutes?|mins?|seconds?|secs?|h|m|s)\b(?P<half2>\s+and\s+a\s+half)?")
_EN_SPECIAL = {"half an hour": 1800, "half a minute": 30, "a quarter of an hour": 900,
               "quarter of an hour": 900, "a quarter hour": 900, "an hour and a half": 5400}


def en_duration(text: str) -> float | None:
    """"two and a half minutes", "1 hour 30 minutes", "half an hour" -> seconds."""
    text = " ".join(text.split())
    if text in _EN_SPECIAL:
        return float(_EN_SPECIAL[text])
    total, at = 0.0, 0
    for match in _EN_PART.finditer(text):
        gap = text[at : match.start()].strip(" ,")
        if gap not in ("", "and"):
            return None
        n = en_number(match.group("n"))
        if n is None:
            return None
        half = 0.5 if match.group("half1") or match.group("half2") else 0.0
        total += (n + half) * _EN_UNITS[match.group("unit")]
        at = match.end()
    return total if total > 0 and at == len(text) else None


_JA_PARTS = re.compile(rf"(?:(?P<h>{CJK_NUMBER})時間)?(?:(?P<m>{CJK_NUMBER})分(?:間)?)?"
                       rf"(?P<half>半)?(?:(?P<s>{CJK_NUMBER})秒(?:間)?)?")
_ZH_PARTS = re.compile(rf"(?:(?P<h>{CJK_NUMBER}|半)(?:个)?(?:小时|钟头))?"
                       rf"(?:(?P<m>{CJK_NUMBER})(?:分钟|分)(?P<half>半)?(?:钟)?)?"
                       rf"(?:(?P<s>{CJK_NUMBER})秒(?:钟)?)?")


def cjk_duration(text: str, language: str) -> float | None:
    """"五分", "二分半", "1時間30分"; "五分钟", "两分半钟", "半小时" -> seconds."""
    match = (_JA_PARTS if language == "ja" else _ZH_PARTS).fullmatch(text)
    if not match or not text:
        return None
    total = 0.0
    for group, unit in (("h", 3600), ("m", 60), ("s", 1)):
        said = match.group(group)
        if said:
            n = 0.5 if said == "半" else cjk_number(said)
            if n is None:
                return None
            total += n * unit
    if match.group("half"):
        total += 30
    return total or None


# ---- times of day ----------------------------------------------------------------------

_EN_DAY = r"(?P<day>today|tonight|tomorrow|this (?:morning|afternoon|evening))"
_EN_HOUR_WORDS = {w: i for i, w in enumerate(ONES[:13])}
_EN_CLOCK = re.compile(
    r"(?:(?P<noon>noon|midday|midnight)"
    r"|(?P<half>half|(?:a )?quarter) (?P<rel>past|to) (?P<h1>\d{1,2}|[a-z]+)"
    rf"|(?P<h2>\d{{1,2}}|[a-z]+)(?:[:.](?P<mm>\d{{2}})| (?P<mw>{EN_NUMBER}|oh [a-z]+))?"
    r"(?: ?o'?clock)?)"
    r"(?: ?(?P<ampm>[ap]\.? ?m\.?)| in the (?P<part>morning|afternoon|evening)| at night"
    r"|(?= tonight))?")
EN_TIME = rf"(?:{_EN_DAY} )?(?:at )?{_EN_CLOCK.pattern}(?: {_EN_DAY.replace('day>', 'day2>')})?"
_EN_TIME = re.compile(EN_TIME)


def _hour(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return _EN_HOUR_WORDS.get(word)


def resolve(hour: int, minute: int, now: datetime, *, pm: bool | None = None,
            days: int | None = None) -> datetime | None:
    """The moment an hour and minute mean (the rule in the module's docstring).
    ``pm``: None when not said; ``days``: 0 today, 1 tomorrow, None not said."""
    if not (0 <= hour <= 23 and 0 <= minute <= 59) or (pm is not None and hour > 12):
        return None
    if pm is not None:
        hour = hour % 12 + (12 if pm else 0)
    if days is not None:
        if pm is None and 1 <= hour <= 6:
            hour += 12
        when = datetime.combine(now.date() + timedelta(days=days), time(hour, minute),
                                now.tzinfo)
        return when if when > now else None
    choices = [hour] if pm is not None or hour == 0 or hour > 12 else [hour % 12, hour % 12 + 12]
    found = []
    for h in choices:
        when = datetime.combine(now.date(), time(h, minute), now.tzinfo)
        found.append(when if when > now else when + timedelta(days=1))
    return min(found)


def en_time(text: str, now: datetime) -> datetime | None:
    """"at 6", "tomorrow at nine", "6:30 pm", "half past six", "noon" -> when."""
    match = _EN_TIME.fullmatch(text.strip())
    if not match:
        return None
    day = match.group("day") or match.group("day2")
    days = None if day is None else 1 if day == "tomorrow" else 0
    pm: bool | None = None
    if match.group("ampm"):
        pm = match.group("ampm").startswith("p")
    elif match.group("part") or day in ("tonight", "this evening", "this afternoon") or (
            "at night" in text):
        pm = match.group("part") != "morning" and day != "this morning"
    elif day == "this morning":
        pm = False
    if match.group("noon"):
        midnight = match.group("noon") == "midnight"
        return resolve(0 if midnight else 12, 0, now, pm=not midnight, days=days)
    hour_word = match.group("h1") or match.group("h2")
    hour = _hour(hour_word)
    if hour is None:
        return None
    minute = 0
    if match.group("half"):
        minute = 30 if match.group("half") == "half" else 15
        if match.group("rel") == "to":
            hour, minute = (hour - 1) % 24, 60 - minute
    elif match.group("mm"):
        minute = int(match.group("mm"))
    elif match.group("mw"):
        said = en_number(match.group("mw").removeprefix("oh "))
        if said is None:
            return None
        minute = int(said)
    return resolve(hour, minute, now, pm=pm, days=days)


_JA_TIME = re.compile(
    rf"(?P<day>今日|明日|あした|あす|今晩|今夜)?(?:の)?(?P<part>午前|午後|朝|夜|夕方|昼)?"
    rf"(?P<h>{CJK_NUMBER})時(?:(?P<half>半)|(?P<m>{CJK_NUMBER})分)?")
_ZH_TIME = re.compile(
    rf"(?P<day>今天|明天|后天|今晚)?(?P<part>凌晨|早上|早晨|上午|中午|下午|傍晚|晚上)?"
    rf"(?P<h>{CJK_NUMBER})(?:点|點)(?:(?P<half>半)|(?P<quarter>一刻|三刻)|(?P<m>{CJK_NUMBER})(?:分)?)?")
_PM_PARTS = ("午後", "夜", "夕方", "今晩", "今夜", "下午", "傍晚", "晚上", "今晚")


def cjk_time(text: str, now: datetime, language: str) -> datetime | None:
    """"6時", "明日の朝9時", "午後6時半"; "六点", "明天九点", "下午三点一刻" -> when."""
    match = (_JA_TIME if language == "ja" else _ZH_TIME).fullmatch(text)
    if not match:
        return None
    hour_value = cjk_number(match.group("h"))
    if hour_value is None or not hour_value.is_integer():
        return None
    hour, minute = int(hour_value), 0
    if match.group("half"):
        minute = 30
    elif match.groupdict().get("quarter"):
        minute = 15 if match.group("quarter") == "一刻" else 45
    elif match.group("m"):
        said = cjk_number(match.group("m"))
        if said is None:
            return None
        minute = int(said)
    day, part = match.group("day"), match.group("part")
    days = None if day is None else 2 if day == "后天" else 1 if day in (
        "明日", "あした", "あす", "明天") else 0
    pm: bool | None = None
    if part in _PM_PARTS or day in _PM_PARTS:
        pm = True
    elif part is not None and part not in ("昼", "中午"):
        pm = False
    elif part in ("昼", "中午"):
        pm = hour < 6 or hour == 12
    return resolve(hour, minute, now, pm=pm, days=days)
