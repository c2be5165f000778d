"""Explicit memory requests in what the user said, recognised by rules, not by the LLM.

"Remember that my sister is called Mei" must be kept every time, and "I remember that
day" must never be; a small deterministic parser does both and is tested by calling it.
The persona's spoken answer is still the language model's.

Also here: the note of remembered facts put in front of the user's words (see
``with_memories``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.ports import ChatMessage


@dataclass(frozen=True)
class Remember:
    fact: str


@dataclass(frozen=True)
class Forget:
    fact: str


@dataclass(frozen=True)
class Recall:
    """"What do you remember about me?": every memory goes into the prompt."""


Intent = Remember | Forget | Recall

_LEAD = r"(?:(?:hey|hi|ok|okay|oh|so|and|also|well|now|hana|kai|mira)\W+)*"
"""Filler or a name before the request ("Okay Hana, remember that...")."""
_POLITE = r"(?:please\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
_REMEMBER = re.compile(
    rf"^{_LEAD}{_POLITE}(?:remember|don'?t\s+forget|do\s+not\s+forget|keep\s+in\s+mind|note)"
    rf"(?:\s+(?:this|that))?[\s:,]+(?:that\s+)?(?P<fact>.+)$",
    re.IGNORECASE,
)
_FORGET = re.compile(
    rf"^{_LEAD}{_POLITE}forget(?:\s+(?:about|that|what\s+i\s+said\s+about))?\s+"
    rf"(?:that\s+)?(?P<fact>.+)$",
    re.IGNORECASE,
)
_RECALL = re.compile(
    r"\bwhat\s+(?:do|did)\s+you\s+(?:remember|know|recall)\s+about\s+me\b"
    r"|\bwhat\s+have\s+you\s+remembered\b|\bwhat\s+(?:do|did)\s+you\s+remember\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_QUESTION_START = re.compile(r"^(?:do|did|does)\s+you\s+(?:still\s+)?(?:remember|forget)\b",
                             re.IGNORECASE)
""""Do you remember that I like tea?" asks; "Can you remember that..." is a request."""


def parse(text: str) -> Intent | None:
    """The memory request in ``text``, if it asks for one (first matching sentence)."""
    for sentence in _SENTENCE.split(text.strip()):
        intent = _parse_sentence(sentence.strip())
        if intent is not None:
            return intent
    return None


def _parse_sentence(sentence: str) -> Intent | None:
    if _RECALL.search(sentence):
        return Recall()
    if _QUESTION_START.match(sentence):
        return None
    match = _REMEMBER.match(sentence)
    if match:
        fact = _fact(match.group("fact"))
        return Remember(fact) if fact else None
    match = _FORGET.match(sentence)
    if match:
        fact = _fact(match.group("fact"))
        if fact and fact.lower() not in {"it", "that", "this", "everything"}:
            return Forget(fact)
    return None


def _fact(raw: str) -> str:
    fact = " ".join(raw.split()).strip(" .!?,;:")
    return fact[:1].upper() + fact[1:] if fact else ""


MEMORY_HEADER = "(Things you remember about the user, from earlier conversations:"


def memory_note(facts: Sequence[str]) -> str:
    """The remembered facts as a short note, or '' when there are none."""
    if not facts:
        return ""
    lines = "\n".join(f"- {fact}" for fact in facts)
    return f"{MEMORY_HEADER}\n{lines})\n\n"


def with_memories(messages: Sequence[ChatMessage], note: str) -> list[ChatMessage]:
    """``messages`` with ``note`` put in front of the last (the new) user message.

    Not a system message of its own: chat templates such as Gemma's accept a system
    message only first and need user/assistant turns to alternate. And not in the system
    prompt: that stays byte-identical, so the persona prefix and the history stay in
    llama.cpp's cache; the note is not kept in the history either, so only the new turn
    (and the previous user message it no longer carries) is evaluated afresh."""
    out = list(messages)
    if not note or not out or out[-1].role != "user":
        return out
    out[-1] = ChatMessage("user", note + out[-1].content)
    return out
