"""Asking before a tool changes something: one call waits for the user's yes or no.

A user's tool server may offer tools that change things outside the app (add to a
calendar, send a message). The model's call to such a tool is not run at once: it is
kept as the one ``PendingCall``, the model is told to ask (its result says so), and the
window shows the question with Allow / Always allow / Don't. The user's next words settle
it when they are plainly a yes or a no ("yes", "sure, go ahead", "yes, always", "no",
"はい", "いいよ", "不用"); a yes lets the model make the same call again within the next
reply, a click runs it at once. Anything else leaves it waiting until it goes stale.
Built-in tools never ask: they keep what they do in the app and say it aloud.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from app.tools.phrases import lang
from app.tools.spec import ToolCall, ToolResult

STALE_AFTER_S = 120.0
"""A question nobody answered in two minutes is dropped (the user moved on)."""
APPROVAL_S = 60.0
"""How long a yes lets the model make the approved call (its next reply)."""


class Answer(Enum):
    YES = "yes"
    ALWAYS = "always"
    NO = "no"


_EN_YES = re.compile(
    r"(yes|yeah|yep|yup|sure|ok|okay|please|go ahead|do it|sounds good|of course|"
    r"absolutely|right|correct|alright|all right|please do)"
    r"(?:[ ,.!]+(?:yes|sure|please|go ahead|do it|thanks|thank you|that's fine))*")
_EN_ALWAYS = re.compile(r"(?:yes|yeah|sure|ok|okay)?[ ,.!]*(?:and )?(?:always|"
                        r"always allow(?: it)?|don't ask (?:me )?again|every time)")
_EN_NO = re.compile(r"(no|nope|nah|don't|do not|no thanks|no thank you|cancel|stop|"
                    r"never mind|not now|leave it)(?:[ ,.!]+(?:thanks|thank you|"
                    r"don't|not now|please|never mind))*")
_JA_YES = ("はい", "うん", "いいよ", "いいです", "お願い", "おねがい", "どうぞ", "ええ",
           "そうして", "やって")
_JA_NO = ("いいえ", "いや", "やめて", "やめとく", "いらない", "だめ", "ダメ", "結構")
_ZH_YES = ("好", "好的", "可以", "是的", "是", "行", "对", "嗯", "要", "麻烦你了", "请")
_ZH_NO = ("不", "不用", "不要", "别", "算了", "不行", "取消")
_ALWAYS_CJK = ("いつも", "毎回", "次から聞かなくて", "总是", "一直", "以后都", "不用再问")


def _bare(text: str) -> str:
    return re.sub(r"[\s。、，,.!！?？~〜…]+", " ", text.lower()).strip()


def answer_to(text: str, language: str = "en") -> Answer | None:
    """The user's words as an answer to "Shall I...?", or None when they are not plainly
    one (a new request, a question back): only short, whole answers count."""
    bare = _bare(text)
    if not bare or len(bare) > 40:
        return None
    if lang(language) == "en":
        if _EN_ALWAYS.fullmatch(bare):
            return Answer.ALWAYS
        if _EN_NO.fullmatch(bare):
            return Answer.NO
        return Answer.YES if _EN_YES.fullmatch(bare) else None
    squeezed = bare.replace(" ", "")
    for word in _JA_NO + _ZH_NO:
        if squeezed.startswith(word):
            return Answer.NO
    yes = any(squeezed.startswith(word) for word in _JA_YES + _ZH_YES)
    if yes and any(word in squeezed for word in _ALWAYS_CJK):
        return Answer.ALWAYS
    return Answer.YES if yes and len(squeezed) <= 12 else None


@dataclass(frozen=True)
class PendingCall:
    """A call that waits for the user's yes."""

    call: ToolCall
    asked_at: float

    def stale(self, now: float) -> bool:
        return now - self.asked_at > STALE_AFTER_S


def ask_first_text(call: ToolCall) -> str:
    """What the model reads instead of a result: ask, do not claim it done."""
    arguments = json.dumps(call.arguments, ensure_ascii=False, default=str)[:300]
    return (f"{call.name} was NOT run yet: it changes something, so the user must agree "
            f"first. Ask them in one short question whether to do it ({arguments}); if "
            "they say yes, call it again.")


def declined(language: str = "en") -> str:
    return {"ja": "わかった、やめておくね。", "zh": "好的，那就不做了。"}.get(
        lang(language), "Okay, I won't.")


def done_before_stop(spoken: str, language: str = "en") -> str:
    """Said after a reply was talked over once its tool had already acted."""
    return {"ja": f"止められる前に、もうやってあったよ。{spoken}",
            "zh": f"你打断之前我已经做好了：{spoken}"}.get(
        lang(language), f"Just so you know, that was already done before you stopped me. "
                        f"{spoken}")


def did_tool(name: str, language: str = "en") -> str:
    """What a tool that changed something did, when it gave no line of its own."""
    said = name.replace("_", " ")
    return {"ja": f"{said}を実行したよ。", "zh": f"我已经执行了{said}。"}.get(
        lang(language), f"I ran {said}.")


def done_after_click(name: str, spoken: str, ok: bool, language: str = "en") -> str:
    """Said when a call allowed in the window has run."""
    if not ok:
        return {"ja": "ごめんね、うまくいかなかった。", "zh": "抱歉，没有成功。"}.get(
            lang(language), f"Sorry, {name.replace('_', ' ')} didn't work.")
    return spoken or {"ja": "できたよ。", "zh": "好了。"}.get(lang(language), "Done.")


class Confirms(Protocol):
    """Which tools ask first, and the user's "always allow" (a user's tool servers)."""

    def needs_confirmation(self, tool_name: str) -> bool: ...

    def allow_always(self, tool_name: str) -> None: ...


class Permissions:
    """The one question waiting for the user, and the one yes waiting for its call.
    Not thread-safe: the tool desk holds its lock around every use."""

    def __init__(self, confirms: Confirms | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.confirms, self._clock = confirms, clock
        self.pending: PendingCall | None = None
        self._approved: tuple[str, float] | None = None
        """A tool name the user said yes to, and until when the yes holds."""

    def now(self) -> float:
        return self._clock()

    def gate(self, call: ToolCall, builtin: bool) -> ToolResult | None:
        """None when ``call`` may run now; else the result that tells the model to ask
        (and the call waits as ``pending``)."""
        if builtin or self.confirms is None:
            return None
        now, approved = self._clock(), self._approved
        if approved is not None and approved[0] == call.name:
            self._approved = None  # one yes, one call
            if now <= approved[1]:
                return None
        if not self.confirms.needs_confirmation(call.name):
            return None
        self.pending = PendingCall(call, now)
        return ToolResult.failure(ask_first_text(call))

    def hear(self, text: str, language: str) -> Answer | None:
        """The user's next words: a plain yes, "always" or no settles the question."""
        pending = self.pending
        if pending is None:
            return None
        if pending.stale(self._clock()):
            self.pending = None
            return None
        answer = answer_to(text, language)
        if answer is None:
            return None
        self.pending = None
        if answer is not Answer.NO:
            if answer is Answer.ALWAYS and self.confirms is not None:
                self.confirms.allow_always(pending.call.name)
            self._approved = (pending.call.name, self._clock() + APPROVAL_S)
        return answer

    def take(self, call_id: str, always: bool) -> ToolCall | None:
        """The waiting call, allowed by a click (``always``: from now on without asking);
        None when it was already settled or has gone stale."""
        pending = self.pending
        if pending is None or pending.call.call_id != call_id or pending.stale(self._clock()):
            return None
        self.pending = None
        if always and self.confirms is not None:
            self.confirms.allow_always(pending.call.name)
        return pending.call

    def drop(self, call_id: str) -> None:
        if self.pending is not None and self.pending.call.call_id == call_id:
            self.pending = None
