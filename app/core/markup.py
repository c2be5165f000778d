"""Spoken text from model text: markdown, emoji, ``*stage directions*`` and emotion tags
(``emotion``) removed, and the measures the sentence gate counts with (words, CJK characters).

Streaming-safe: ``clean_inline`` stops at a markup span that needs more text to be resolved,
so the gate can call it on every token and get the same result for any split.
"""

from __future__ import annotations

import re
import unicodedata

from app.core.emotion import (
    EMOTION_WORDS,
    OPENS_SENTENCE,
    TAG_OPENERS,
    Emotion,
    TagScan,
    read_tag,
)

SENTENCE_ENDS = ".!?…。！？"
SPAN_LIMIT = 200
_KEPT_SYMBOLS = frozenset("°")
LINE_MARKER = re.compile(r"[ \t]*(?:#{1,6}|[-*+>•]|\d{1,3}[.)])(?:[ \t]+|$)")
MARKER_PREFIX = re.compile(r"[ \t]*(?:#{1,6}|[-*+>•]|\d{1,3}[.)]?|`{1,2})?")
"""Sentence marks, a held span's limit, symbols that are spoken, and line markers (lists,
headings) that are not."""

# A markup step: (cleaned text, index after the construct), or None when more text is needed.
_Step = tuple[str, int] | None
Marks = list[tuple[int, Emotion | None]]
"""Emotion tags met while cleaning: (offset in the cleaned text, the tag's emotion)."""


def is_unspoken(ch: str) -> bool:
    cp = ord(ch)
    if ch in _KEPT_SYMBOLS:
        return False
    return (
        unicodedata.category(ch) == "So"
        or cp in (0x200D, 0x20E3, 0xFE0E, 0xFE0F)  # joiner, keycap, variation selectors
        or 0x1F3FB <= cp <= 0x1F3FF  # skin tones
        or 0xE0020 <= cp <= 0xE007F  # flag tags
    )


def is_cjk(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


def join_spoken(chunks: list[str]) -> str:
    """Spoken chunks as one text: a space between words, none inside Japanese or Chinese
    (「四秒のタイマーを」「セットしました。」 is one sentence, and the history keeps it so)."""
    out = ""
    for chunk in chunks:
        if out and chunk and not (_cjk_side(out[-1]) and _cjk_side(chunk[0])):
            out += " "
        out += chunk
    return out


def _cjk_side(ch: str) -> bool:
    """A CJK character or a CJK mark (、。「」！？)."""
    return is_cjk(ch) or "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef"


def cjk_count(text: str) -> int:
    return sum(1 for ch in text if is_cjk(ch))


def spoken_words(text: str) -> int:
    """Words with a letter or digit in them (a lone "—" or "*" is no word)."""
    return sum(1 for word in text.split() if any(ch.isalnum() for ch in word))


def end_of_run(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def skip_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _find_char(raw: str, ch: str, start: int, final: bool) -> int | None:
    """Index of ch within the span limit; -1 if it cannot come; None if more text is needed."""
    limit = start + SPAN_LIMIT
    found = raw.find(ch, start, limit)
    if found >= 0:
        return found
    return -1 if final or len(raw) >= limit else None


def _find_closer(raw: str, start: int, marker: str, final: bool) -> int | None:
    """Like ``_find_char`` for a run of ``*`` or backticks of exactly the opener's length."""
    limit, pos = start + SPAN_LIMIT, start
    while True:
        pos = raw.find(marker[0], pos, limit)
        if pos < 0:
            return -1 if final or len(raw) >= limit else None
        end = end_of_run(raw, pos, marker[0])
        if end == len(raw) and not final:
            return None
        if end - pos == len(marker) and not (marker[0] == "*" and raw[pos - 1].isspace()):
            return pos
        pos = end


def _emphasis(raw: str, pos: int, final: bool, tail: str, marks: Marks) -> _Step:
    """``*action*`` is dropped (``*smiles*`` counts as a tag); ``*italic*`` / ``**bold**``
    keep their inner text."""
    start = end_of_run(raw, pos, "*")
    if start == len(raw) and not final:
        return None
    if start - pos > 3 or start == len(raw) or raw[start].isspace():
        return raw[pos:start], start  # a literal asterisk ("2 * 3")
    close = _find_closer(raw, start, raw[pos:start], final)
    if close is None:
        return None
    if close < 0:
        return raw[pos:start], start
    inner, end = raw[start:close], close + (start - pos)
    if start - pos == 1 and inner.islower() and len(inner.split()) <= 6:
        action = "", end
        if tail == "" or tail in SENTENCE_ENDS:
            return _acted(inner, action, marks)  # starts a line or follows a sentence
        after = skip_spaces(raw, end)
        if after == len(raw) and not final:
            return None
        if after == len(raw) or raw[after] in SENTENCE_ENDS:
            return action  # ends the line or the sentence
    return clean_inline(inner, 0, True, tail)[0], end


def _acted(inner: str, action: tuple[str, int], marks: Marks) -> _Step:
    """A stage direction that opens a sentence: "*smiles*" gives it the happy face."""
    emotion = EMOTION_WORDS.get(inner.split()[0]) if inner.split() else None
    if emotion is not None:
        marks.append((0, emotion))
    return action


def _code(raw: str, pos: int, final: bool) -> _Step:
    start = end_of_run(raw, pos, "`")
    if start == len(raw) and not final:
        return None
    close = _find_closer(raw, start, raw[pos:start], final)
    if close is None:
        return None
    if close < 0:
        return "", start  # a stray backtick is not spoken
    return raw[start:close], close + (start - pos)


def _link(raw: str, pos: int, final: bool, tail: str) -> _Step:
    """``[text](url)`` is spoken as ``text``; any other bracket is literal."""
    close = _find_char(raw, "]", pos + 1, final)
    if close is None or (close >= 0 and close + 1 == len(raw) and not final):
        return None
    if close >= 0 and raw.startswith("(", close + 1):
        end = _find_char(raw, ")", close + 2, final)
        if end is None:
            return None
        if end >= 0:
            return clean_inline(raw[pos + 1 : close], 0, True, tail)[0], end + 1
    return "[", pos + 1


def clean_inline(raw: str, pos: int, final: bool, tail: str,
                 marks: Marks | None = None) -> tuple[str, int, str]:
    """Clean raw[pos:] up to the first markup span that needs more text to be resolved.

    ``tail`` is the last non-space character written on this line ("" at its start).
    Returns the cleaned text, where cleaning stopped, and the new tail; the emotion tags
    cut out are added to ``marks``.
    """
    parts: list[str] = []
    size = 0
    found: Marks = []
    while pos < len(raw):
        ch = raw[pos]
        step: _Step
        if ch in TAG_OPENERS:
            tag = read_tag(raw, pos, final, tail == "" or tail in OPENS_SENTENCE)
            if tag is TagScan.WAIT:
                break
            if isinstance(tag, tuple):
                found.append((size, tag[0]))
                pos = tag[1]
                continue
        if ch == "*":
            known = len(found)
            step = _emphasis(raw, pos, final, tail, found)
            found[known:] = [(size, emotion) for _, emotion in found[known:] if step]
        elif ch == "`":
            step = _code(raw, pos, final)
        elif ch == "[":
            step = _link(raw, pos, final, tail)
        else:
            step = ("" if is_unspoken(ch) else ch), pos + 1
        if step is None:
            break
        text, pos = step
        parts.append(text)
        size += len(text)
        tail = text.rstrip()[-1:] or tail
    if marks is not None:
        marks += found
    return "".join(parts), pos, tail


def word_end(text: str, start: int) -> int:
    """The end of the word at text[start]: letters, and apostrophes between them ("you're")."""
    end = start
    while end < len(text) and (text[end].isalpha() or (
            text[end] in "'\u2019" and end > start and end + 1 < len(text)
            and text[end + 1].isalpha())):
        end += 1
    return end
