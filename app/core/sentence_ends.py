"""Where a sentence ends: abbreviations ("Dr."), numbers ("3.14"), initials, CJK marks and
quotes (「はい。」と言った), and where to cut a chunk that never reaches one."""

from __future__ import annotations

from app.core.markup import end_of_run, is_cjk, skip_spaces, spoken_words

_CJK_SENTENCE_ENDS = "。！？"
_OPENERS = "\"'([{“‘「『（"  # noqa: RUF001 (typographic quotes)
NUMBERISH = "0123456789.,"
_WORD_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "approx"}
_ABBREVIATIONS = frozenset(_WORD_ABBREVIATIONS | {"e.g", "i.e", "u.s", "a.m", "p.m"})
_NUMBER_ABBREVIATIONS = frozenset({"no"})  # "No. 5" holds together, "No. I won't." splits
_CJK_OPENERS = "「『（“"
_QUOTE_CLOSERS = "」』"
_QUOTE_PARTICLES = "とっをはがのもにで"
"""Hiragana that continue a sentence after a closing quote: 「はい。」と言った."""


def ends_sentence_here(text: str, start: int, run_end: int, end: int, final: bool) -> bool | None:
    """Whether the terminator run text[start:run_end] (closers up to end) ends a sentence."""
    follower_at = skip_spaces(text, end)
    if follower_at == len(text):
        return True if final else None
    run = text[start:run_end]
    follower = text[follower_at]
    if end > run_end and text[end - 1] in _QUOTE_CLOSERS and follower in _QUOTE_PARTICLES:
        return False  # 「ありがとう。」と言った: the quote is part of the sentence
    if any(ch in _CJK_SENTENCE_ENDS for ch in run):
        return True
    if follower_at == end:
        if is_cjk(follower) or follower in _CJK_OPENERS:  # 本当?すごい / 我很好.你呢
            if "…" in run or ".." in run:
                return False  # えっと……そうだね: a pause inside the sentence
            return run != "." or (start > 0 and is_cjk(text[start - 1]))
        return False  # no space after it: 3.14, e.g., U.S., example.com
    if "…" in run or ".." in run:
        return not follower.islower()
    if run != ".":
        return True  # "!", "?", "?!"
    if follower.islower():
        return False  # "approx. five", "fig. three"
    before = text[:start].split()
    word = before[-1].lstrip(_OPENERS) if before else ""
    if word.lower() in _ABBREVIATIONS or (len(word) == 1 and word.isupper()):
        return False  # "Dr. Smith", "J. R. R. Tolkien"
    return not (word.lower() in _NUMBER_ABBREVIATIONS and follower.isdigit())


def after_abbreviation(text: str) -> bool:
    """Whether ``text`` ends with an abbreviation's dot ("Mr.", "No."): no chunk ends there."""
    words = text.split()
    word = words[-1].lstrip(_OPENERS) if words else ""
    return word.endswith(".") and word[:-1].lower() in _ABBREVIATIONS | _NUMBER_ABBREVIATIONS


def forced_end(text: str, lead: int, limit: int) -> int:
    """Cut an over-long chunk at the last safe space before limit, else inside a word."""
    for cut in range(limit, lead + 1, -1):
        if text[cut].isspace() and not text[cut - 1].isspace():
            word = text[lead:cut].split()[-1].lstrip(_OPENERS)
            if not (word.endswith(".") and word[:-1].lower() in _ABBREVIATIONS):
                return cut
    cut = limit
    while cut > lead + 1 and text[cut - 1] in NUMBERISH and text[cut] in NUMBERISH:
        cut -= 1
    return limit if cut == lead + 1 else cut


def long_number_break(text: str, lead: int, space: int, start: int, min_words: int,
                      long_digits: int) -> bool:
    """Whether an early chunk ends at text[space], before the number at text[start] ("The
    moon is | 222,750 miles away."): only once the number is complete (a space or a letter
    after it), so "2" that becomes "222,750" is judged whole; 0 ``min_words``: never."""
    if min_words <= 0 or after_abbreviation(text[lead:space]):
        return False  # "Mr. 32,000", "No. 12,500" hold together
    end = end_of_run(text, start, NUMBERISH)
    if end == len(text):
        return False  # more digits may come
    digits = sum(1 for ch in text[start:end] if ch.isdigit())
    return digits >= long_digits and spoken_words(text[lead:space]) >= min_words
