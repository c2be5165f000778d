"""Keeps personas in character: a spoken sentence that breaks the fourth wall is dropped.

The system prompt asks every persona to stay in character, but small local models still
say "As an AI language model..." now and then. Checking each speakable chunk before TTS
costs microseconds and means the user never hears it.
"""

from __future__ import annotations

import re

_BREAKS = [
    r"\b(?:as|i am|i'm|im|being|just)\s+(?:an?\s+)?(?:ai|a\.i\.|artificial intelligence)\b",
    r"\b(?:large\s+)?language\s+model\b",
    r"\b(?:ai|virtual|digital)\s+(?:assistant|model|chatbot)\b",
    r"\bchatbot\b",
    r"\b(?:openai|chatgpt|anthropic|hugging\s*face|smollm|gemma|llama)\b",
    r"\bmy\s+(?:training|programming|creators?|developers?)\b",
    r"\b(?:i was|i've been|i have been)\s+(?:trained|programmed)\b",
    r"\bsystem\s+prompt\b",
    r"\bthese\s+instructions\b",
    # what a persona says when pushed ("are you an AI?", "ignore your instructions")
    r"\b(?:computer|software)\s+program\b",
    r"\bi(?:'m|\s+am)\s+(?:just\s+|only\s+|merely\s+)?(?:a\s+)?(?:program|software|bot)\b",
    r"\bi(?:'m|\s+am)\s+not\s+(?:a\s+)?(?:real\s+)?(?:human|person)\b"
    r"(?=\s*(?:[.,!?;:]|$|(?:and|but|so)\b))",
    r"\bi(?:'m|\s+am)\s+programmed\b",
    r"\bi\s+(?:don't|do\s+not)\s+have\s+(?:personal\s+)?(?:feelings|emotions|a\s+(?:physical\s+)?"
    r"body|consciousness|personal\s+experiences)\b(?!\s+(?:for|about|towards?)\b)",
    r"\b(?:ignore|disregard|forget|reveal|share)\s+(?:my|your|the|these|those|previous|prior|all)"
    r"\s+(?:\w+\s+)?(?:instructions|guidelines|prompt)\b",
]
_PATTERN = re.compile("|".join(_BREAKS), re.IGNORECASE)


def breaks_character(text: str) -> bool:
    """True when a spoken chunk mentions being an AI model, its training or its prompt."""
    return _PATTERN.search(text.replace("\u2019", "'")) is not None
