"""Numbers as speech recognition writes them, and as a voice should say them.

Read: digits ("5", "2.5", full-width ones too), English words ("twenty-five", "a hundred and
ten", "two and a half", "a"), Japanese and Chinese numerals ("五", "十五", "二十", "两",
"一百二十"). Written: English words and CJK numerals up to 9,999, for spoken replies.
"""

from __future__ import annotations

import re
import unicodedata

ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen")
_TENS = ("_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
         "ninety")
_WORDS: dict[str, int] = {w: i for i, w in enumerate(ONES)} | {
    w: 10 * i for i, w in enumerate(_TENS) if w != "_"} | {"a": 1, "an": 1, "couple": 2}
_SCALES = {"hundred": 100, "thousand": 1000}
_WORD = r"(?:" + "|".join(sorted([*_WORDS, *_SCALES], key=len, reverse=True)) + r")\b"
EN_NUMBER = rf"(?:\d+(?:[.,]\d+)?|\b{_WORD}(?:[\s-]+(?:and\s+)?{_WORD})*)"
"""A regex for a number in digits or English words (check the match with ``en_number``)."""
_ZERO = "\u3007"  # the ideographic zero
_CJK_DIGITS = {_ZERO: 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4,
               "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000}
CJK_NUMBER = r"(?:\d+(?:\.\d+)?|[\u3007零一二两兩三四五六七八九十百千]+)"
"""A regex for a number in digits or numerals (on NFKC text: full-width digits are ASCII)."""


def en_number(text: str) -> float | None:
    """``text`` (digits or English number words, nothing else) as a number."""
    text = text.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if re.fullmatch(r"\d+,\d{1,2}", text):  # "2,5": a decimal comma
        return float(text.replace(",", "."))
    words = [w for w in re.split(r"[\s-]+", text) if w and w != "and"]
    if not words:
        return None
    total, current, seen = 0, 0, False
    for word in words:
        if word in _WORDS:
            if word in ("a", "an") and seen:
                return None
            current += _WORDS[word]
        elif word in _SCALES:
            current = max(current, 1) * _SCALES[word]
            if _SCALES[word] >= 1000:
                total, current = total + current, 0
        else:
            return None
        seen = True
    return float(total + current)


def cjk_number(text: str) -> float | None:
    """``text`` (digits, or Japanese/Chinese numerals) as a number."""
    text = unicodedata.normalize("NFKC", text).strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if not text or any(c not in _CJK_DIGITS and c not in _CJK_UNITS for c in text):
        return None
    if all(c in _CJK_DIGITS for c in text) and len(text) > 1:  # 二〇二四: digit by digit
        return float("".join(str(_CJK_DIGITS[c]) for c in text))
    total, digit = 0, None
    for char in text:
        if char in (_ZERO, "零"):
            continue
        if char in _CJK_DIGITS:
            if digit is not None:
                return None
            digit = _CJK_DIGITS[char]
        else:
            total += (1 if digit is None else digit) * _CJK_UNITS[char]
            digit = None
    return float(total + (digit or 0))


def en_words(n: int) -> str:
    """``n`` (0 to 9,999) in English words: 25 -> "twenty-five"."""
    if not 0 <= n < 10000:
        return str(n)
    if n < 20:
        return ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + ONES[n % 10] if n % 10 else "")
    if n < 1000:
        rest = n % 100
        return ONES[n // 100] + " hundred" + (" and " + en_words(rest) if rest else "")
    rest = n % 1000
    joiner = " and " if 0 < rest < 100 else " "
    return ONES[n // 1000] + " thousand" + (joiner + en_words(rest) if rest else "")


def cjk_numeral(n: int, chinese: bool = False) -> str:
    """``n`` (0 to 9,999) in numerals: 25 -> "二十五"; ``chinese``: a lone 2 is "两"."""
    if not 0 <= n < 10000:
        return str(n)
    if n == 0:
        return "零"
    if chinese and n == 2:
        return "两"
    digits = _ZERO + "一二三四五六七八九"
    out = ""
    for value, unit in ((1000, "千"), (100, "百"), (10, "十")):
        count = n // value % 10
        if count:
            bare = count == 1 and (not chinese or (value == 10 and not out))
            out += ("" if bare else digits[count]) + unit
        elif out and n % value and chinese:
            out += "" if out.endswith("零") else "零"
    ones = n % 10
    return out + (digits[ones] if ones else "")
