"""Japanese and Mandarin requests for the built-in tools (see ``intents``).

Text is NFKC-normalized (digits are ASCII); spaces and sentence marks are dropped first,
since recognizers put them anywhere. Numbers may be digits or numerals (五, 十五, 二十).
"""

from __future__ import annotations

import re
from datetime import datetime

from app.tools.calculator import spoken_expression
from app.tools.numbers import CJK_NUMBER, cjk_number
from app.tools.spec import ToolCall
from app.tools.when import cjk_duration, cjk_time

_MARKS = re.compile(r"[\s、。,.!?「」『』“”\"]+")
_POLITE_JA = (r"(?:して|してください|してくれる|してくれ|してほしい|お願い(?:します)?|下さい"
              r"|ください|て)?(?:ね|よ|な)?$")
_JA_DUR = rf"(?:{CJK_NUMBER}時間)?(?:{CJK_NUMBER}分(?:間)?)?半?(?:{CJK_NUMBER}秒(?:間)?)?"
_ZH_DUR = (rf"(?:(?:{CJK_NUMBER}|半)个?(?:小时|钟头))?(?:{CJK_NUMBER}(?:分钟|分)半?钟?)?"
           rf"(?:{CJK_NUMBER}秒钟?)?")

_JA_TIMER = [
    re.compile(rf"^(?P<dur>{_JA_DUR})の?タイマー(?:を)?(?:セット|かけ|設定|スタート|お願い)?"
               + _POLITE_JA),
    re.compile(rf"^タイマーを?(?P<dur>{_JA_DUR})(?:に|で)?(?:セット|かけ|設定)?" + _POLITE_JA),
]
_JA_REMIND = re.compile(
    r"^(?P<when>.+?)に(?P<what>.+)(?:ように|のを|こと|って|と)?"
    r"(?:リマインド|思い出させ|知らせ|教え|声をかけ|言っ)(?:て|し)?"
    r"(?:ください|ね|くれる|ほしい|て)?$")
_JA_AFTER = re.compile(rf"^(?P<dur>{_JA_DUR})(?:後|たったら|経ったら)$")
_JA_TIME = re.compile(r"^(?:今|いま)?(?:何時|なんじ)(?:ですか|なの|かな|だろう|か)?$"
                      r"|^今の時間(?:は|を教えて)?$|^時間(?:を)?教えて$")
_JA_DATE = re.compile(r"^(?:今日は?)?(?:何日|なんにち|何曜日|なんようび|何月何日)"
                      r"(?:ですか|だっけ|か)?$"
                      r"|^今日の日付(?:は)?$")
_JA_CANCEL = re.compile(r"^(?!.*(?:ないで|しない|ません|するな))"  # not "don't cancel"
                        r"(?P<what>.*?)(?P<kind>タイマー|リマインダー|リマインド)"
                        r"(?:を|は)?(?:キャンセル|止め|とめ|消し|けし|取り消|解除|ストップ)")
_JA_LIST = re.compile(r"^(?:タイマー|リマインダー)(?:は|って)?"
                      r"(?:何|なに|いくつ|どれ|ある|残り|あと)"
                      r"|^(?:タイマー|リマインダー)の?一覧")
_JA_NOTE = re.compile(r"^(?P<text>.+?)(?:って|と)メモ(?:して|しておいて|しといて|を取って)")
_JA_FIND = re.compile(r"^(?P<q>.+?)(?:について|のこと|に関して)(?:何|なん|なに)(?:て|と|を)?"
                      r"メモ(?:した|して)")
_JA_CALC = re.compile(r"^(?P<e>.+?)(?:は|って)(?:いくつ|何|なん|なに)?(?:ですか|でしょう|か)?$")

_ZH_TIMER = [
    # the verb as heard: 设 often comes back as a sound-alike (社, 射, 摄) or 随; 计时器 as
    # 计时期 or 计时机: the duration and the timer word make the request, not the verb
    re.compile(rf"^(?:帮我|请|给我)?(?:设置|设定|定个|设|定|开|来|社|射|摄|涉|随)?(?:一个|个)?"
               rf"(?P<dur>{_ZH_DUR})的?(?:计时器|计时期|计时机|定时器|倒计时|闹钟)(?:吧)?$"),
    re.compile(rf"^(?:帮我|请)?(?:计时|倒计时)(?P<dur>{_ZH_DUR})(?:吧)?$"),
]
_ZH_REMIND = [
    re.compile(r"^(?:请|帮我)?提醒我(?P<when>.+?(?:点|點)(?:半|一刻|三刻|[0-9零一二三四五六七八九十]+分?)?"
               r"|.+?(?:分钟|小时|钟头)(?:之?后|以后))(?:要|去)?(?P<what>.+)$"),
    re.compile(r"^(?P<when>.+?)(?:的时候)?(?:请|帮我)?提醒我(?:要|去)?(?P<what>.+)$"),
]
_ZH_AFTER = re.compile(rf"^(?P<dur>{_ZH_DUR})(?:之?后|以后)$")
_ZH_TIME = re.compile(r"^(?:现在|请问现在)?(?:几点了?|几点钟|是几点|什么时间|什么时候了)"
                      r"(?:了|呢|啊)?$")
_ZH_DATE = re.compile(r"^今天(?:是)?(?:几号|几月几号|星期几|礼拜几|什么日子)(?:了|呢|啊)?$"
                      r"|^(?:现在|今天)?几月几号$")
_ZH_CANCEL = re.compile(r"^(?:帮我|请)?(?:取消|关掉|停掉|关闭|删除|删掉)(?:那个|这个|我的)?"
                        r"(?P<what>.*?)(?P<kind>计时器|定时器|倒计时|提醒)$"
                        r"|^(?:把)?(?P<what2>.*?)(?P<kind2>计时器|定时器|倒计时|提醒)(?:取消|关掉|停掉)")
_ZH_LIST = re.compile(r"^我?(?:现在)?有(?:哪些|什么|几个|没有)(?:计时器|提醒)"
                      r"|^(?:计时器|倒计时)还剩(?:多少|多久)")
_ZH_NOTE = re.compile(r"^(?:帮我|请)?(?:记(?:一)?下(?:来)?|记个笔记|做个笔记)[:：]?(?P<text>.+)$")
_ZH_FIND = re.compile(r"^我(?:关于|对)?(?P<q>.+?)(?:记了什么|记过什么|的笔记(?:是什么)?)$"
                      r"|^(?:关于)(?P<q2>.+?)我记了什么$")
_ZH_CALC = re.compile(r"^(?P<e>.+?)(?:等于|是)(?:多少|几)(?:呢|啊)?$")
_CJK_NUMBERS = re.compile(CJK_NUMBER)


def parse(sentence: str, now: datetime, language: str) -> ToolCall | None:
    text = _MARKS.sub("", sentence).lower()
    if not text:
        return None
    rules = (_ja_time, _ja_timer, _ja_remind, _ja_cancel, _ja_notes, _ja_calc) if (
        language == "ja") else (_zh_time, _zh_timer, _zh_remind, _zh_cancel, _zh_notes,
                                _zh_calc)
    for rule in rules:
        call = rule(text, now)
        if call is not None:
            return call
    listing = _JA_LIST if language == "ja" else _ZH_LIST
    return ToolCall("list_timers", {}, language=language) if listing.match(text) else None


def _timer(patterns: list[re.Pattern[str]], text: str, language: str) -> ToolCall | None:
    for pattern in patterns:
        match = pattern.match(text)
        seconds = cjk_duration(match.group("dur"), language) if match else None
        if seconds is not None and seconds >= 1:
            return ToolCall("set_timer", {"seconds": round(seconds)}, language=language)
    return None


def _reminder(when: str, what: str, now: datetime, language: str) -> ToolCall | None:
    what = what.strip()
    if not what:
        return None
    after = (_JA_AFTER if language == "ja" else _ZH_AFTER).match(when)
    if after:
        seconds = cjk_duration(after.group("dur"), language)
        if seconds is None or seconds < 60:
            return None
        return ToolCall("set_reminder", {"text": what, "in_minutes": round(seconds / 60, 2)},
                        language=language)
    due = cjk_time(when, now, language)
    if due is None:
        return None
    return ToolCall("set_reminder", {"text": what, "at": f"{due:%H:%M}",
                                     "date": due.date().isoformat()}, language=language)


def _cancel(match: re.Match[str] | None, language: str, reminder_kinds: tuple[str, ...]
            ) -> ToolCall | None:
    if match is None:
        return None
    groups = match.groupdict()
    kind = groups.get("kind") or groups.get("kind2") or ""
    what = (groups.get("what") or groups.get("what2") or "").removesuffix("の").strip()
    arguments: dict[str, object] = {"kind": "reminder" if kind in reminder_kinds else "timer"}
    if what and what not in ("その", "あの", "この", "全部の", "所有", "全部"):
        arguments["label"] = what
    return ToolCall("cancel_timer", arguments, language=language)


def _calc(match: re.Match[str] | None, language: str) -> ToolCall | None:
    if match is None:
        return None
    def digits(found: re.Match[str]) -> str:
        value = cjk_number(found.group())
        return found.group() if value is None else f"{value:g}"
    expression = spoken_expression(_CJK_NUMBERS.sub(digits, match.group("e")))
    return ToolCall("calculate", {"expression": expression}, language=language) if (
        expression) else None


# ---- Japanese ----------------------------------------------------------------------------

def _ja_time(text: str, now: datetime) -> ToolCall | None:
    if _JA_TIME.match(text):
        return ToolCall("current_time", {"what": "time"}, language="ja")
    if _JA_DATE.match(text):
        return ToolCall("current_time", {"what": "date"}, language="ja")
    return None


def _ja_timer(text: str, now: datetime) -> ToolCall | None:
    return _timer(_JA_TIMER, text, "ja")


def _ja_remind(text: str, now: datetime) -> ToolCall | None:
    """The time may come first or after the errand ("お母さんに6時に電話する..."): each に
    is tried as the end of the time."""
    match = _JA_REMIND.match(text)
    if not match:
        return None
    request = text[: match.end("what")]
    for at in (m.start() for m in re.finditer("に", request)):
        when, what = request[:at], request[at + 1 :]
        what = re.sub(r"(?:ように|のを|こと|って|と)$", "", what)
        call = _reminder(when, what, now, "ja")
        if call is None and "に" in what:  # the time in the middle
            head, _, tail = what.partition("に")
            call = _reminder(head, f"{when}に{tail}", now, "ja")
        if call is not None:
            return call
    return None


def _ja_cancel(text: str, now: datetime) -> ToolCall | None:
    return _cancel(_JA_CANCEL.match(text), "ja", ("リマインダー", "リマインド"))


def _ja_notes(text: str, now: datetime) -> ToolCall | None:
    found = _JA_FIND.match(text)
    if found:
        return ToolCall("search_notes", {"query": found.group("q")}, language="ja")
    note = _JA_NOTE.match(text)
    return ToolCall("add_note", {"text": note.group("text")}, language="ja") if note else None


def _ja_calc(text: str, now: datetime) -> ToolCall | None:
    return _calc(_JA_CALC.match(text), "ja")


# ---- Mandarin ----------------------------------------------------------------------------

def _zh_time(text: str, now: datetime) -> ToolCall | None:
    if _ZH_TIME.match(text):
        return ToolCall("current_time", {"what": "time"}, language="zh")
    if _ZH_DATE.match(text):
        return ToolCall("current_time", {"what": "date"}, language="zh")
    return None


def _zh_timer(text: str, now: datetime) -> ToolCall | None:
    return _timer(_ZH_TIMER, text, "zh")


def _zh_remind(text: str, now: datetime) -> ToolCall | None:
    for pattern in _ZH_REMIND:
        match = pattern.match(text)
        call = _reminder(match.group("when"), match.group("what"), now, "zh") if match else None
        if call is not None:
            return call
    return None


def _zh_cancel(text: str, now: datetime) -> ToolCall | None:
    return _cancel(_ZH_CANCEL.match(text), "zh", ("提醒",))


def _zh_notes(text: str, now: datetime) -> ToolCall | None:
    found = _ZH_FIND.match(text)
    if found:
        query = found.group("q") or found.group("q2")
        return ToolCall("search_notes", {"query": query}, language="zh")
    note = _ZH_NOTE.match(text)
    return ToolCall("add_note", {"text": note.group("text")}, language="zh") if note else None


def _zh_calc(text: str, now: datetime) -> ToolCall | None:
    return _calc(_ZH_CALC.match(text), "zh")
