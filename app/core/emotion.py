"""Emotion tags: the model marks each sentence with how it is said ("[happy] Oh, lovely!"),
and the tag is cut out before anything is spoken, shown or kept.

The persona's rules ask for one English word in square brackets at the start of each
sentence. Models vary the form, so ``(happy)``, ``<happy>``, ``【happy】`` and upper case are
tags too, and common synonyms map onto the eight expressions (``joy`` is happy, ``smirk``
is smug). A bracketed word the table does not know is a tag only at the start of a
sentence (``[whispers] Come here.``): it is dropped and the face rests. Known emotion words
in brackets are dropped wherever they stand, so a misplaced tag is never read aloud.

``read_tag`` decides from text that has already arrived, so a tag split over tokens
("[", "hap", "py]") is cut the same way as a whole one (``markup.clean_inline`` calls it).
"""

from __future__ import annotations

import re
from enum import Enum


class Emotion(Enum):
    """What the face shows while a sentence plays (``None`` in a chunk: the resting face)."""

    NEUTRAL = "neutral"
    HAPPY = "happy"
    SAD = "sad"
    SURPRISED = "surprised"
    THINKING = "thinking"
    SMUG = "smug"
    EMBARRASSED = "embarrassed"
    ANGRY = "angry"


class TagScan(Enum):
    """``read_tag``'s answers besides a tag."""

    WAIT = "wait"
    """The bracket may still become a tag: more text is needed."""
    TEXT = "text"
    """Not a tag: the bracket is ordinary text."""


Tag = tuple[Emotion | None, int]
"""A tag's emotion (None: a tag, but not one the table knows) and the index after it."""

_SYNONYMS: dict[Emotion, tuple[str, ...]] = {
    Emotion.NEUTRAL: ("neutral", "calm", "serious", "relaxed", "gently", "softly"),
    Emotion.HAPPY: ("happy", "joy", "joyful", "glad", "smile", "smiles", "smiling", "laugh",
                    "laughs", "laughing", "giggle", "giggles", "giggling", "excited", "cheerful",
                    "delighted", "grin", "grins", "grinning", "warmly", "pleased", "happily",
                    "enthusiastic", "friendly", "笑", "嬉しい", "开心", "高兴"),
    Emotion.SAD: ("sad", "sadly", "sorrow", "unhappy", "sigh", "sighs", "sighing", "cry",
                  "cries", "crying", "tearful", "upset", "disappointed", "melancholy", "lonely",
                  "gloomy", "悲しい", "泣", "难过", "伤心"),
    Emotion.SURPRISED: ("surprised", "surprise", "shock", "shocked", "gasp", "gasps", "wow",
                        "amazed", "astonished", "startled", "驚き", "惊讶"),
    Emotion.THINKING: ("thinking", "thinks", "thoughtful", "hmm", "pondering",
                       "ponders", "curious", "wondering", "unsure", "confused", "puzzled",
                       "considering", "考え中", "思考"),
    Emotion.SMUG: ("smug", "teasing", "tease", "teases", "smirk", "smirks", "smirking",
                   "playful", "sly", "wink", "winks", "winking", "mischievous", "proud",
                   "cheeky", "confident", "得意"),
    Emotion.EMBARRASSED: ("embarrassed", "blush", "blushes", "blushing", "shy", "shyly",
                          "flustered", "awkward", "nervous", "bashful", "照れ", "害羞"),
    Emotion.ANGRY: ("angry", "angrily", "mad", "annoyed", "irritated", "furious",
                    "frustrated", "grumpy", "pout", "pouts", "pouting", "怒り", "生气"),
}
EMOTION_WORDS: dict[str, Emotion] = {
    word: emotion for emotion, words in _SYNONYMS.items() for word in words
}
"""Every word read as a tag, lower case, to its emotion."""

_PAIRS = {"[": "]", "(": ")", "<": ">", "【": "】", "（": "）", "［": "］"}  # noqa: RUF001
OPENS_SENTENCE = ".!?…。！？\"')]}”’」』）>】］"  # noqa: RUF001
"""After these (a sentence's end, maybe closed by a quote or bracket) a sentence starts."""
TAG_OPENERS = frozenset(_PAIRS)
_CLOSERS = frozenset(_PAIRS.values())
MAX_TAG_CHARS = 24
"""Longer bracketed text is never a tag: it is spoken (or, for ``[text](url)``, a link)."""
_MAX_UNKNOWN_WORDS = 2
_WORD_BREAKS = " -_:/|,"
_FILLERS = frozenset(("emotion", "emotions", "mood", "feeling", "feelings", "face",
                      "expression", "tone", "tag", "very", "a", "bit", "little", "slightly",
                      "so", "really", "and", "with"))
"""Words a tag may hold besides emotion words ("[emotion: happy]", "[a bit sad]")."""


def _split(text: str) -> list[str]:
    for mark in _WORD_BREAKS:
        text = text.replace(mark, " ")
    return text.split()


def _closed(inner: str, sentence_start: bool) -> Emotion | TagScan | None:
    """The emotion of a closed bracket's text; TEXT when it is no tag."""
    words = _split(inner.lower())
    known = [EMOTION_WORDS[word] for word in words if word in EMOTION_WORDS]
    if known and all(word in EMOTION_WORDS or word in _FILLERS for word in words):
        return known[0]
    stripped = inner.strip(_WORD_BREAKS)
    if (sentence_start and 0 < len(words) <= _MAX_UNKNOWN_WORDS
            and all(word.isascii() and word.isalpha() for word in words)
            and (stripped.islower() or stripped.isupper())):
        return None  # "[whispers]": a tag, but no face we have
    return TagScan.TEXT


_LINK_LIMIT = 200
"""As ``markup.SPAN_LIMIT``: how far a link's ``(url)`` may reach."""


def _link_end(raw: str, start: int, final: bool) -> TagScan | None:
    """After "[word]": TEXT when a whole "(url)" follows (a link), WAIT while it may."""
    if start == len(raw):
        return None if final else TagScan.WAIT
    if raw[start] != "(":
        return None
    if raw.find(")", start + 1, start + 1 + _LINK_LIMIT) >= 0:
        return TagScan.TEXT
    more = not final and len(raw) < start + 1 + _LINK_LIMIT
    return TagScan.WAIT if more else None


def read_tag(raw: str, pos: int, final: bool, sentence_start: bool) -> Tag | TagScan:
    """Whether the bracket at ``raw[pos]`` opens an emotion tag.

    ``final``: no more text will come on this line. ``sentence_start``: the bracket opens a
    sentence (or the line), where an unknown bracketed word is a tag too, and so is a
    known one left unclosed ("[happy Hello!")."""
    too_long = pos + 2 + MAX_TAG_CHARS
    end, stop = pos + 1, min(len(raw), too_long)
    while end < stop and (raw[end].isalpha() or raw[end] in _WORD_BREAKS):
        end += 1
    if end == len(raw) < too_long and not final:
        return TagScan.WAIT
    if end < stop and raw[end] in _CLOSERS:  # "[happy)" too: a model's typo
        emotion = _closed(raw[pos + 1 : end], sentence_start)
        if emotion is TagScan.TEXT:
            return TagScan.TEXT
        if raw[pos] == "[":  # "[happy](https://...)" is a link, spoken as its text
            link = _link_end(raw, end + 1, final)
            if link is not None:
                return link
        assert not isinstance(emotion, TagScan)
        return emotion, end + 1
    if sentence_start:  # unclosed: "[happy Hello there!" loses only "[happy"
        word_end = pos + 1
        while word_end < len(raw) and raw[word_end].isalpha():
            word_end += 1
        word = raw[pos + 1 : word_end].lower()
        if word in EMOTION_WORDS and (word_end == len(raw) or raw[word_end] in " :"):
            return EMOTION_WORDS[word], word_end
    return TagScan.TEXT


_LINK = re.compile(r"\[[^\]\n]*\]\([^)\n]*\)")


def strip_tags(text: str) -> str:
    """Emotion tags cut out of a whole text: the raw reply shown after the fact, and each
    gate chunk once more (markup cut from inside a bracket can leave a tag behind)."""
    out, pos, start = [], 0, True
    while pos < len(text):
        ch = text[pos]
        if ch in TAG_OPENERS:
            tag = read_tag(text, pos, True, start)
            if isinstance(tag, tuple):
                pos = tag[1]
                continue
            link = _LINK.match(text, pos) if ch == "[" else None
            if link is not None:  # kept whole: its "(url)" is no tag
                out.append(link.group())
                pos, start = link.end(), False
                continue
        out.append(ch)
        if ch == "\n" or not ch.isspace():
            start = ch == "\n" or ch in OPENS_SENTENCE
        pos += 1
    return " ".join("".join(out).split()) if len(out) < len(text) else text


class MoodTrack:
    """Where tags fell in the sentence gate's pending text, and so the emotion of each
    chunk cut from it: the first tag inside the chunk, else the reply's last one (a
    sentence cut at its clauses keeps its face); None before any tag or after an unknown
    one (the resting face)."""

    def __init__(self) -> None:
        self._marks: list[tuple[int, Emotion | None]] = []
        self.mood: Emotion | None = None

    def add(self, base: int, marks: list[tuple[int, Emotion | None]]) -> None:
        """Tags at ``marks``' offsets in text appended at ``base`` of the pending text."""
        self._marks += [(base + offset, emotion) for offset, emotion in marks]

    def take(self, end: int) -> Emotion | None:
        """The emotion of the chunk that is the pending text's first ``end`` characters
        (the rest is then the pending text: the later tags' offsets move with it)."""
        inside = [emotion for offset, emotion in self._marks if offset < end]
        self._marks = [(offset - end, e) for offset, e in self._marks if offset >= end]
        if not inside:
            return self.mood
        self.mood = inside[-1]
        return inside[0]
