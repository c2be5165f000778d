"""Streaming sentence gate: LLM tokens in, speakable chunks out, for sentence-gated TTS.

The synthesiser can only start once it holds a complete chunk, so time to first audio is
set by how long the first chunk takes to arrive. The first chunk of a reply may therefore
end at a clause boundary ("Well, I think that the answer is simple,") once it has a few
words; so may the chunk right after such a clause (the rest of a long sentence would
not be synthesized while a one-second clause plays), early in the reply; later chunks end
at sentence ends, which sound natural, or at a clause once they are long (a run-on
sentence would otherwise keep the speaker waiting for its end). When an early chunk has no
comma but is already long, it may also end just before a word that opens a clause
("The sky looks blue to us | because sunlight scatters..."): speakers pause there too, and
the first words are heard a clause sooner than at the sentence's end; once it has ten
words, before a preposition too, so a run-on first sentence does not hold the first audio
to its end; and before a long number ("The moon is | 222,750 miles away."), which takes
long to say and so to synthesize.

Japanese and Chinese have no spaces, so there a "word" count means nothing: the same rules
count CJK characters instead (about five make a second of speech). A first chunk of a few
characters ends at the first comma-like mark (、，,), later ones at sentence ends (。！？!?,
with or without a following space) or at a clause once they are long. Quotes 「」“” stay
with their sentence, and a quote followed by its particle (「…。」と言った) is not cut.

A boundary is confirmed by the next non-space character (or the end of the line or reply),
so "3." may still become "3.14" and "Dr." is never cut. Markdown, emoji and
``*stage directions*`` are removed first; an open markup span holds text back for at most
``_SPAN_LIMIT`` characters. Every decision depends only on text that has already arrived,
so any split of a reply into tokens gives the same chunks.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_SENTENCE_ENDS = ".!?…。！？"
_CJK_SENTENCE_ENDS = "。！？"
_CLAUSE_MARKS = ",;:—、，；："
_SPACED_CLAUSE_MARKS = ",;:"  # need a space after them: "2,000" and "3:45" stay whole
_CLOSERS = "\"')]}”’」』）"  # noqa: RUF001 (typographic quotes)
_OPENERS = "\"'([{“‘「『（"  # noqa: RUF001 (typographic quotes)
_NUMBERISH = "0123456789.,"
_WORD_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "approx"}
_ABBREVIATIONS = frozenset(_WORD_ABBREVIATIONS | {"e.g", "i.e", "u.s", "a.m", "p.m"})
_NUMBER_ABBREVIATIONS = frozenset({"no"})  # "No. 5" holds together, "No. I won't." splits
_SPACE_BEFORE_MARK = re.compile(r"\s+(?=[.,!?;:…])")  # left where emoji or actions were cut
_CJK_OPENERS = "「『（“"
_QUOTE_CLOSERS = "」』"
_QUOTE_PARTICLES = "とっをはがのもにで"
"""Hiragana that continue a sentence after a closing quote: 「はい。」と言った."""
_SPAN_LIMIT = 200
_MAX_MARK_RUN = 3
"""Longer runs of sentence marks ("？？？？", "!!!!!") end the chunk at once; the rest of
the run is unspeakable and dropped (a small model can loop on "？" for hundreds of tokens,
which kept the whole loop in one chunk and the voice synthesizing it for seconds)."""
_KEPT_SYMBOLS = frozenset("°")
CLAUSE_OPENERS = frozenset(
    {"because", "which", "but", "and", "when", "while", "although", "though", "since",
     "unless", "whereas", "whenever", "wherever"}
)
"""English words a speaker may pause before; an early chunk may end in front of them. Only
words that open a clause whatever follows: "so" ("so much") and "that" ("that one") do not."""
PHRASE_OPENERS = frozenset(
    {"of", "in", "on", "at", "for", "with", "from", "by", "about", "into", "over", "after",
     "before", "during", "through", "without", "across", "around", "under", "between"}
)
"""Prepositions: a long first sentence may be cut before one ("the answer | of the most")."""
_LINE_MARKER = re.compile(r"[ \t]*(?:#{1,6}|[-*+>•]|\d{1,3}[.)])(?:[ \t]+|$)")
_MARKER_PREFIX = re.compile(r"[ \t]*(?:#{1,6}|[-*+>•]|\d{1,3}[.)]?|`{1,2})?")

# A markup step: (cleaned text, index after the construct), or None when more text is needed.
_Step = tuple[str, int] | None


@dataclass(frozen=True)
class GateConfig:
    first_clause_min_words: int = 2
    """The first chunk may end at a clause mark (, ; : — and CJK) once it has this many
    words: "In Japanese," "Of course," "Bees make honey," are whole intonation phrases a
    speaker pauses after (a lone "Oh," or "Well," is too short to stand alone)."""
    clause_split_words: int = 12
    """After a chunk that ended at a clause, the next may too (with ``first_clause_min_words``)
    until this many words of the reply are out: a short first clause plays for about a
    second, and the long rest of its sentence would not be synthesized by then."""
    later_clause_min_words: int = 10
    """Any chunk may end at a clause mark once it has this many words: a long run-on
    sentence is spoken in parts instead of keeping the speaker waiting for its end."""
    first_clause_min_chars: int = 5
    """The same for Japanese and Chinese, in CJK characters: 「そうですね、」 「今天天气不错，」."""
    clause_split_chars: int = 20
    """``clause_split_words`` in CJK characters (about four seconds of speech)."""
    later_clause_min_chars: int = 16
    """``later_clause_min_words`` in CJK characters (about three seconds of speech)."""
    opener_break_min_words: int = 6
    """An early chunk (as for ``first_clause_min_words``) with no clause mark may end before
    a word of ``clause_openers`` once it has this many words: a comma-free first sentence
    would otherwise hold the first audio until its end."""
    clause_openers: frozenset[str] = CLAUSE_OPENERS
    """Words that open a clause, lower case; empty turns these breaks off."""
    phrase_break_min_words: int = 10
    """An early chunk may also end before a preposition (``phrase_openers``) once it has
    this many words: a long run-on first sentence (a small model's loop, "the most
    accurate answer of the most accurate answer of...") would otherwise hold the first
    audio until its end, and take as long again to synthesize."""
    phrase_openers: frozenset[str] = PHRASE_OPENERS
    """Words that open a phrase, lower case; empty turns these breaks off."""
    number_break_min_words: int = 3
    """An early chunk may end before a long number (``long_number_digits``) once it has
    this many words: "The moon is | 222,750 miles away." A long number is seconds of speech
    ("two hundred twenty-two thousand...") that the voice synthesizes before saying a word;
    a speaker pauses before one anyway. 0 turns these breaks off."""
    long_number_digits: int = 5
    """Digits that make a number long to say (years and "2,000" are short)."""
    min_chunk_chars: int = 2
    """Shorter chunks are carried into the next one."""
    max_chunk_chars: int = 300
    """Force a split at a word boundary when no punctuation comes."""


def _is_unspoken(ch: str) -> bool:
    cp = ord(ch)
    if ch in _KEPT_SYMBOLS:
        return False
    return (
        unicodedata.category(ch) == "So"
        or cp in (0x200D, 0x20E3, 0xFE0E, 0xFE0F)  # joiner, keycap, variation selectors
        or 0x1F3FB <= cp <= 0x1F3FF  # skin tones
        or 0xE0020 <= cp <= 0xE007F  # flag tags
    )


def _is_cjk(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


def _cjk_count(text: str) -> int:
    return sum(1 for ch in text if _is_cjk(ch))


def _spoken_words(text: str) -> int:
    """Words with a letter or digit in them (a lone "—" or "*" is no word)."""
    return sum(1 for word in text.split() if any(ch.isalnum() for ch in word))


def _run_end(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def _skip_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _find_char(raw: str, ch: str, start: int, final: bool) -> int | None:
    """Index of ch within the span limit; -1 if it cannot come; None if more text is needed."""
    limit = start + _SPAN_LIMIT
    found = raw.find(ch, start, limit)
    if found >= 0:
        return found
    return -1 if final or len(raw) >= limit else None


def _find_closer(raw: str, start: int, marker: str, final: bool) -> int | None:
    """Like ``_find_char`` for a run of ``*`` or backticks of exactly the opener's length."""
    limit, pos = start + _SPAN_LIMIT, start
    while True:
        pos = raw.find(marker[0], pos, limit)
        if pos < 0:
            return -1 if final or len(raw) >= limit else None
        end = _run_end(raw, pos, marker[0])
        if end == len(raw) and not final:
            return None
        if end - pos == len(marker) and not (marker[0] == "*" and raw[pos - 1].isspace()):
            return pos
        pos = end


def _emphasis(raw: str, pos: int, final: bool, tail: str) -> _Step:
    """``*action*`` is dropped; ``*italic*`` / ``**bold**`` keep their inner text."""
    start = _run_end(raw, pos, "*")
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
        if tail == "" or tail in _SENTENCE_ENDS:
            return "", end  # starts a line or follows a sentence: a stage direction
        after = _skip_spaces(raw, end)
        if after == len(raw) and not final:
            return None
        if after == len(raw) or raw[after] in _SENTENCE_ENDS:
            return "", end  # ends the line or the sentence
    return _clean_inline(inner, 0, True, tail)[0], end


def _code(raw: str, pos: int, final: bool) -> _Step:
    start = _run_end(raw, pos, "`")
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
            return _clean_inline(raw[pos + 1 : close], 0, True, tail)[0], end + 1
    return "[", pos + 1


def _clean_inline(raw: str, pos: int, final: bool, tail: str) -> tuple[str, int, str]:
    """Clean raw[pos:] up to the first markup span that needs more text to be resolved.

    ``tail`` is the last non-space character written on this line ("" at its start).
    Returns the cleaned text, where cleaning stopped, and the new tail.
    """
    parts: list[str] = []
    while pos < len(raw):
        ch = raw[pos]
        step: _Step
        if ch == "*":
            step = _emphasis(raw, pos, final, tail)
        elif ch == "`":
            step = _code(raw, pos, final)
        elif ch == "[":
            step = _link(raw, pos, final, tail)
        else:
            step = ("" if _is_unspoken(ch) else ch), pos + 1
        if step is None:
            break
        text, pos = step
        parts.append(text)
        tail = text.rstrip()[-1:] or tail
    return "".join(parts), pos, tail


def _sentence_end(text: str, start: int, run_end: int, end: int, final: bool) -> bool | None:
    """Whether the terminator run text[start:run_end] (closers up to end) ends a sentence."""
    follower_at = _skip_spaces(text, end)
    if follower_at == len(text):
        return True if final else None
    run = text[start:run_end]
    follower = text[follower_at]
    if end > run_end and text[end - 1] in _QUOTE_CLOSERS and follower in _QUOTE_PARTICLES:
        return False  # 「ありがとう。」と言った: the quote is part of the sentence
    if any(ch in _CJK_SENTENCE_ENDS for ch in run):
        return True
    if follower_at == end:
        if _is_cjk(follower) or follower in _CJK_OPENERS:  # 本当?すごい / 我很好.你呢
            if "…" in run or ".." in run:
                return False  # えっと……そうだね: a pause inside the sentence
            return run != "." or (start > 0 and _is_cjk(text[start - 1]))
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


def _forced_end(text: str, lead: int, limit: int) -> int:
    """Cut an over-long chunk at the last safe space before limit, else inside a word."""
    for cut in range(limit, lead + 1, -1):
        if text[cut].isspace() and not text[cut - 1].isspace():
            word = text[lead:cut].split()[-1].lstrip(_OPENERS)
            if not (word.endswith(".") and word[:-1].lower() in _ABBREVIATIONS):
                return cut
    cut = limit
    while cut > lead + 1 and text[cut - 1] in _NUMBERISH and text[cut] in _NUMBERISH:
        cut -= 1
    return limit if cut == lead + 1 else cut


class SentenceGate:
    """Push LLM tokens, get speakable chunks; call ``flush`` at the end of each reply."""

    def __init__(self, config: GateConfig | None = None) -> None:
        self._config = config or GateConfig()
        self._reset()

    def _reset(self) -> None:
        self._raw = ""  # unresolved raw text of the current line
        self._line_start, self._skip_line, self._tail = True, False, ""
        self._pending = ""  # cleaned text not yet emitted
        self._carry = ""  # a too-short chunk, spoken with the next one
        self._words = 0  # words emitted so far in this reply
        self._cjk = 0  # CJK characters emitted so far in this reply
        self._after_clause = True  # the next chunk may end at a clause (the first may)

    def push(self, token: str) -> list[str]:
        """Returns the chunks this token completed (often none)."""
        chunks: list[str] = []
        self._raw += token
        while "\n" in self._raw:
            self._raw, _, rest = self._raw.partition("\n")
            self._drain(final=True)
            chunks += self._segment(final=True)
            self._raw = rest
            self._line_start, self._skip_line, self._tail = True, False, ""
        self._drain(final=False)
        return chunks + self._segment(final=False)

    def flush(self) -> list[str]:
        """End of reply: returns the remainder (if speakable) and resets the gate."""
        self._drain(final=True)
        chunks = self._segment(final=True, end_of_reply=True)
        self._reset()
        return chunks

    def _drain(self, final: bool) -> None:
        """Move the resolved prefix of the current line, cleaned, into the pending text."""
        raw, pos = self._raw, 0
        if self._line_start:
            if not final and _MARKER_PREFIX.fullmatch(raw):
                return  # "1" may become "1. " and "-" may become "- "
            self._line_start = False
            self._skip_line = raw.lstrip().startswith("```")
            marker = _LINE_MARKER.match(raw)
            pos = marker.end() if marker else 0
        if self._skip_line:
            self._raw = ""
            return
        text, pos, self._tail = _clean_inline(raw, pos, final, self._tail)
        self._pending += text
        self._raw = raw[pos:]

    def _segment(self, final: bool, end_of_reply: bool = False) -> list[str]:
        chunks: list[str] = []
        while (end := self._find_end(self._pending, final)) is not None:
            self._emit(self._pending[:end], chunks)
            self._pending = self._pending[end:]
        if final:  # the end of a line or reply ends the chunk
            self._emit(self._pending, chunks, end_of_reply)
            self._pending = ""
        return chunks

    def _emit(self, piece: str, chunks: list[str], last: bool = False) -> None:
        piece = " ".join(piece.split())
        glue = "" if self._carry and piece and _is_cjk(self._carry[-1]) else " "
        text = _SPACE_BEFORE_MARK.sub("", f"{self._carry}{glue}{piece}".strip())
        if not any(ch.isalnum() for ch in text):
            return  # nothing to say ("---", a lone "*")
        if len(text) < self._config.min_chunk_chars and not last:
            self._carry = text  # spoken with the next chunk
            return
        chunks.append(text)
        self._carry = ""
        self._words += len(text.split())
        self._cjk += _cjk_count(text)
        self._after_clause = (
            text[-1] in _CLAUSE_MARKS
            and self._words < self._config.clause_split_words
            and self._cjk < self._config.clause_split_chars
        )

    def _find_end(self, text: str, final: bool) -> int | None:
        """End of the first confirmed chunk in text; None to wait for more."""
        lead = _skip_spaces(text, 0)
        limit = lead + self._config.max_chunk_chars
        pos = lead
        while pos < len(text):
            if pos >= limit:
                return _forced_end(text, lead, limit)
            verdict: bool | None
            if text[pos] in _SENTENCE_ENDS:
                run_end = _run_end(text, pos, _SENTENCE_ENDS)
                if run_end - pos > _MAX_MARK_RUN:  # "？？？？…" from a looping model: end here
                    return pos + _MAX_MARK_RUN
                end = _run_end(text, run_end, _CLOSERS)
                verdict = _sentence_end(text, pos, run_end, end, final)
            elif text[pos] in _CLAUSE_MARKS:
                end = _run_end(text, pos, _CLAUSE_MARKS)
                verdict = self._clause_end(text, pos, end, final)
            elif text[pos].isspace() and self._after_clause:
                if self._opener_break(text, lead, pos):
                    return pos  # the chunk ends before the space and the opener
                pos += 1
                continue
            else:
                pos += 1
                continue
            if verdict is None or verdict:
                return None if verdict is None else end
            pos = end
        return None

    def _opener_break(self, text: str, lead: int, space: int) -> bool:
        """Whether an early chunk ends at the space text[space], before a clause opener (or,
        once it is long, a preposition). An opener is known only once a space follows it
        ("and" may become "android"); until then this says no, and the next token's rescan
        of the pending text decides."""
        start = _skip_spaces(text, space)
        if start < len(text) and text[start].isdigit():
            return self._number_break(text, lead, space, start)
        end = start
        while end < len(text) and text[end].isalpha():
            end += 1
        if end == len(text) or not text[end].isspace():
            return False  # not complete yet, or "and." / "but," / "and-"
        config, opener = self._config, text[start:end].lower()
        if opener in config.clause_openers:
            needed = config.opener_break_min_words
        elif opener in config.phrase_openers:
            needed = config.phrase_break_min_words
        else:
            return False
        follower = _skip_spaces(text, end)
        if follower + 1 >= len(text):
            return False  # wait for the start of the word after it
        pronoun = text[follower] == "I" and not text[follower + 1].isalpha()  # "and I'm"
        if text[follower].isupper() and not pronoun:
            return False  # "Romeo and Juliet", "salt and Pepper Co.": a name, not a clause
        return _spoken_words(text[lead:space]) >= needed

    def _number_break(self, text: str, lead: int, space: int, start: int) -> bool:
        """Whether an early chunk ends at text[space], before the number at text[start]: only
        once the number is complete (a space or a letter after it), so "2" that becomes
        "222,750" is judged whole."""
        config = self._config
        if config.number_break_min_words <= 0:
            return False
        end = _run_end(text, start, _NUMBERISH)
        if end == len(text):
            return False  # more digits may come
        digits = sum(1 for ch in text[start:end] if ch.isdigit())
        return (digits >= config.long_number_digits
                and _spoken_words(text[lead:space]) >= config.number_break_min_words)

    def _clause_end(self, text: str, start: int, end: int, final: bool) -> bool | None:
        """Whether the clause marks text[start:end] end a chunk (None: wait for more)."""
        config = self._config
        head = text[:end]
        words = _spoken_words(head)
        cjk = _cjk_count(head)
        early = self._after_clause and (
            words >= config.first_clause_min_words or cjk >= config.first_clause_min_chars
        )
        long = words >= config.later_clause_min_words or cjk >= config.later_clause_min_chars
        if not (early or long):
            return False
        follower_at = _skip_spaces(text, end)
        if follower_at == len(text):
            return True if final else None
        if text[end - 1] not in _SPACED_CLAUSE_MARKS or follower_at > end:
            return True
        # "2,000" and "3:45" stay whole; "好的,我们" (a CJK comma typed half-width) splits
        return start > 0 and _is_cjk(text[start - 1]) and not text[follower_at].isdigit()


def ends_sentence(chunk: str) -> bool:
    """True when a gate chunk ends a sentence, False for a clause ("そうですね、"): a
    reply cap counted in sentences should count only these (CJK replies are cut at
    clauses more often than English ones, so counting chunks would cut them short)."""
    return chunk.rstrip(_CLOSERS)[-1:] not in _CLAUSE_MARKS


def speakable_text(text: str) -> str:
    """The gate's cleaning applied to a whole text: what would be spoken, on one line."""
    gate = SentenceGate()
    return " ".join(gate.push(text) + gate.flush())
