"""Requests for the built-in tools recognised by rules, not by the language model.

A small model cannot call tools reliably, and "set a timer for five minutes" must work
every time while "I set the table for five people" must never set anything: like
``app.core.memory_intents``, a deterministic parser does both and is tested by calling it.
It answers the same ``ToolCall`` a model would make, so both paths run the same tools.

The text comes from speech recognition: case, punctuation and number form (digits or
words) vary, and a request may sit after some chat ("Thanks. Set a timer for ..."). Each
sentence is tried; English rules here, Japanese and Mandarin in ``intents_cjk``.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime

from app.tools import intents_cjk
from app.tools.calculator import spoken_expression
from app.tools.numbers import EN_NUMBER, en_number
from app.tools.spec import ToolCall
from app.tools.when import en_duration, en_time

_LEAD = (r"^(?:(?:hey|hi|ok|okay|oh|so|and|also|well|now|um|uh|right|alright|hana|kai|mira"
         r"|riko|wren|tess|yui|ming|captain mori)\b[\s,]*)*")
_POLITE = (r"(?:(?:please|can you|could you|would you|will you|would you mind|i want you to"
           r"|i'd like you to|i need you to|go ahead and|just)\s+)*")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_TIMER_WORD = r"(?:timer|countdown|tyler|timor|timber)"
"""With the words Whisper hears for "timer" in a synthetic voice ("set a Tyler for 3 seconds")."""
_LABEL = r"(?:(?P<label>[a-z]+)\s+)?"
_TAIL_LABEL = re.compile(
    r"\s+(?:for|called|named)\s+(?:the\s+|my\s+)?(?P<name>[a-z]+(?: [a-z]+)?)$")
_NOT_LABELS = {"a", "an", "the", "new", "my", "me", "one", "another", "kitchen"}

_TIMER = [
    re.compile(rf"^(?:set|start|put on|make|give me|run)(?: me)?\s+(?:a |an |the |another )?"
               rf"{_LABEL}{_TIMER_WORD}\s+(?:for|of|to)\s+(?P<dur>.+?)(?:\s+please)?$"),
    re.compile(rf"^(?:set|start|put on|make|give me|run)(?: me)?\s+(?:a |an |the )?"
               rf"(?P<dur>.+?)\s+{_LABEL}{_TIMER_WORD}(?:\s+please)?$"),
    re.compile(rf"^(?:a |an )?(?P<dur>.+?)\s+{_TIMER_WORD}(?:\s+please)?$"),
    re.compile(rf"^{_TIMER_WORD}\s+(?:for\s+)?(?P<dur>.+?)(?:\s+please)?$"),
]
_REMIND = re.compile(r"^(?:remind me|give me a reminder|set a reminder)\s+(?P<rest>.+)$")
_ERRAND = r"(?:to\s+(?P<to>.+)|(?P<about>about\s+.+)|that\s+(?P<that>.+))"
_IN = re.compile(r"^in\s+(?P<dur>.+)$")
_TIME = [
    re.compile(r"^(?:(?:do you know |can you tell me |tell me )?what(?:'s| is) the time"
               r"|(?:do you know |can you tell me |tell me )?what time (?:is it|it is)"
               r"|tell me the time|what time do you have|(?:the )?time please)"
               r"(?: now| right now)?$"),
]
_DATE = re.compile(r"^(?:what(?:'s| is) (?:the date|today's date|the date today|today)"
                   r"|what day is (?:it|today)(?: today)?|what's today|which day is it"
                   r"|what is the day today|what(?:'s| is) the day)(?: today)?$")
_CANCEL = re.compile(
    r"^(?:cancel|stop|delete|remove|clear|turn off|get rid of)\s+(?:the |my |that |this )?"
    r"(?P<what>.*?)\s*(?P<kind>timer|reminder|countdown)(?:\s+(?:to|about|for)\s+(?P<after>.+))?$")
_LIST = re.compile(
    r"^(?:what|which) (?:timers|reminders|timers and reminders|timers or reminders)"
    r" (?:do i have|have i (?:got|set)|are (?:set|running|on))"
    r"|^(?:do i have|have i got|are there) any (?:timers|reminders)"
    r"|^(?:list|show me|read me|tell me) (?:my |all )?(?:timers|reminders)"
    r"|^how (?:much time|long) (?:is )?left on (?:the |my )?timer"
    r"|^how much time is left$")
_NOTE = re.compile(r"^(?:note|make a note|take a note|write down|jot down|put down)"
                   r"(?:\s+(?:that|of|this))?[\s:,]+(?P<text>.+)$")
_FIND = re.compile(
    r"^(?:what did i (?:note|write down|jot down|make a note of)"
    r"|what (?:are|were|is) (?:my|the) notes?|find (?:my|the) notes?|do i have (?:a|any) notes?"
    r"|what(?:'s| is) in my notes|search (?:my )?notes)\s+(?:about|on|for|regarding)\s+(?P<q>.+)$")
_CALC = re.compile(r"^(?:what(?:'s| is)|how much is|calculate|compute|work out)\s+(?P<e>.+?)"
                   r"(?:\s+equal)?$")
_NUMBER_WORDS = re.compile(EN_NUMBER)


def parse(text: str, now: datetime, language: str = "en") -> ToolCall | None:
    """The built-in tool request in ``text``, if it makes one (first matching sentence).
    ``now``: the time with its zone (reminder times are resolved from it); ``language``:
    the persona's, tried first."""
    normal = unicodedata.normalize("NFKC", text).strip()
    order = [language, *(x for x in ("en", "ja", "zh") if x != language)]
    for sentence in _SENTENCE.split(normal):
        for lang in order:
            call = (_english(sentence, now) if lang == "en"
                    else intents_cjk.parse(sentence, now, lang) if lang in ("ja", "zh")
                    else None)
            if call is not None:
                return call
    return None


def _clean(sentence: str) -> str:
    text = sentence.lower().replace("\u2019", "'")  # a typographic apostrophe
    text = re.sub(r"[\"“”!?,;]+", " ", text).strip(" .")
    text = re.sub(_LEAD, "", " ".join(text.split()))
    return re.sub(rf"^{_POLITE}", "", text).strip()


def _english(sentence: str, now: datetime) -> ToolCall | None:
    text = _clean(sentence)
    if not text or not re.search(r"[a-z]", text):
        return None
    if _TIME[0].match(text):
        return ToolCall("current_time", {"what": "time"})
    if _DATE.match(text):
        return ToolCall("current_time", {"what": "date"})
    for rule in (_timer, _reminder, _cancel, _notes, _calculation):
        call = rule(text, now)
        if call is not None:
            return call
    if _LIST.match(text):
        return ToolCall("list_timers", {})
    return None


def _timer(text: str, now: datetime) -> ToolCall | None:
    for pattern in _TIMER:
        match = pattern.match(text)
        if not match:
            continue
        said, label = match.group("dur"), match.groupdict().get("label") or ""
        # "a 5 minute timer": the word before "timer" may be the duration's, not a name;
        # "for ten minutes for the pasta": a name after it
        tail = _TAIL_LABEL.search(said)
        named = [(said[:tail.start()], tail.group("name"))] if tail and not label else []
        for dur, name in ((said, label), (f"{said} {label}", ""), *named):
            seconds = en_duration(dur.removesuffix(" long"))
            if seconds is None or seconds < 1:
                continue
            arguments: dict[str, object] = {"seconds": round(seconds)}
            if name and name not in _NOT_LABELS:
                arguments["label"] = name
            return ToolCall("set_timer", arguments)
    return None


def _reminder(text: str, now: datetime) -> ToolCall | None:
    match = _REMIND.match(text)
    if not match:
        return None
    rest = match.group("rest")
    first = re.match(rf"^(?P<when>.+?)\s+{_ERRAND}$", rest)  # "at 6 to call mum"
    later = re.match(rf"^{_ERRAND.replace('(?P<', '(?P<x')}\s+(?P<when>(?:in|at|tomorrow|today"
                     rf"|tonight|this)\b.+)$", rest)  # "to call mum at 6"
    for found, prefix in ((first, ""), (later, "x")):
        if found is None:
            continue
        errand = (found.group(prefix + "to") or found.group(prefix + "about")
                  or found.group(prefix + "that") or "").strip()
        call = _reminder_call(found.group("when"), errand, now)
        if call is not None:
            return call
    return None


def _reminder_call(when: str, errand: str, now: datetime) -> ToolCall | None:
    if not errand:
        return None
    in_ = _IN.match(when)
    if in_:
        seconds = en_duration(in_.group("dur"))
        if seconds is None or seconds < 60:
            return None
        return ToolCall("set_reminder", {"text": errand, "in_minutes": round(seconds / 60, 2)})
    due = en_time(when, now)
    if due is None:
        return None
    return ToolCall("set_reminder", {"text": errand, "at": f"{due:%H:%M}",
                                     "date": due.date().isoformat()})


def _cancel(text: str, now: datetime) -> ToolCall | None:
    match = _CANCEL.match(text)
    if not match:
        return None
    kind = "reminder" if match.group("kind") == "reminder" else "timer"
    what = (match.group("after") or match.group("what") or "").strip()
    if what in ("all", "all the", "all my", "every"):
        return None  # several at once: left to the model, which can list and ask
    arguments: dict[str, object] = {"kind": kind}
    if what and what not in _NOT_LABELS:
        arguments["label"] = what
    return ToolCall("cancel_timer", arguments)


def _notes(text: str, now: datetime) -> ToolCall | None:
    found = _FIND.match(text)
    if found:
        return ToolCall("search_notes", {"query": found.group("q").strip(" .")})
    note = _NOTE.match(text)
    if note and len(note.group("text").split()) >= 2:
        return ToolCall("add_note", {"text": note.group("text").strip(" .")})
    return None


def _digits(text: str) -> str:
    def number(match: re.Match[str]) -> str:
        value = en_number(match.group())
        return match.group() if value is None else f"{value:g}"
    return _NUMBER_WORDS.sub(number, text)


def _calculation(text: str, now: datetime) -> ToolCall | None:
    match = _CALC.match(text)
    if not match:
        return None
    expression = spoken_expression(_digits(match.group("e")))
    return ToolCall("calculate", {"expression": expression}) if expression else None
