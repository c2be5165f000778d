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
characters ends at the first comma-like mark (、，,) or, in Japanese, after a particle
(「週末に | 友達と...」, ``particle_breaks``), later ones at sentence ends (。！？!?,
with or without a following space) or at a clause once they are long. Quotes 「」“” stay
with their sentence, and a quote followed by its particle (「…。」と言った) is not cut.

A boundary is confirmed by the next non-space character (or the end of the line or reply),
so "3." may still become "3.14" and "Dr." is never cut (``sentence_ends``). Markdown, emoji,
``*stage directions*`` and emotion tags are removed first (``markup``); each chunk carries the
emotion its sentence was tagged with (``emotion``). Every decision depends only on text that
has already arrived, so any split of a reply into tokens gives the same chunks.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from app.core.emotion import Emotion, MoodTrack, strip_tags
from app.core.gate_config import GateConfig
from app.core.languages import script_language
from app.core.markup import (
    LINE_MARKER,
    MARKER_PREFIX,
    SENTENCE_ENDS,
    Marks,
    cjk_count,
    clean_inline,
    end_of_run,
    is_cjk,
    skip_spaces,
    spoken_words,
    word_end,
)
from app.core.particle_breaks import after_particle
from app.core.sentence_ends import ends_sentence_here, forced_end, long_number_break

_DIGIT_RUN = re.compile(r"\d[\d,.]*")
_CLAUSE_MARKS = ",;:—、，；："
_SPACED_CLAUSE_MARKS = ",;:"  # need a space after them: "2,000" and "3:45" stay whole
_CLOSERS = "\"')]}”’」』）"  # noqa: RUF001 (typographic quotes)
_SPACE_BEFORE_MARK = re.compile(r"\s+(?=[.,!?;:…])")  # left where emoji or actions were cut
_MAX_MARK_RUN = 3
"""Longer runs of sentence marks ("？？？？", "!!!!!") end the chunk at once; the rest of
the run is unspeakable and dropped (a small model can loop on "？" for hundreds of tokens,
which kept the whole loop in one chunk and the voice synthesizing it for seconds)."""


class Spoken(NamedTuple):
    """A chunk to speak and the emotion it is said with (None: the resting face)."""

    text: str
    emotion: Emotion | None = None
    sentence_end: bool = True
    """False when the chunk ends inside a sentence (a clause, or before an opener word):
    a reply cap counted in sentences counts only the others."""


class SentenceGate:
    """Push LLM tokens, get speakable chunks; call ``flush`` at the end of each reply
    (``feed`` and ``finish`` give the chunks with their emotions)."""

    def __init__(self, config: GateConfig | None = None) -> None:
        self._config = config or GateConfig()
        self._reset()

    def _reset(self) -> None:
        self._raw = ""  # unresolved raw text of the current line
        self._line_start, self._skip_line, self._tail = True, False, ""
        self._pending = ""  # cleaned text not yet emitted
        self._carry = ""  # a too-short chunk, spoken with the next one
        self._carry_mood: Emotion | None = None
        self._moods = MoodTrack()
        self._words = 0  # words emitted so far in this reply
        self._cjk = 0  # CJK characters emitted so far in this reply
        self._after_clause = True  # the next chunk may end at a clause (the first may)
        self._cut_inside = False  # the chunk being found ends inside its sentence

    def push(self, token: str) -> list[str]:
        """Returns the chunks this token completed (often none)."""
        return [chunk.text for chunk in self.feed(token)]

    def flush(self) -> list[str]:
        """End of reply: returns the remainder (if speakable) and resets the gate."""
        return [chunk.text for chunk in self.finish()]

    def feed(self, token: str) -> list[Spoken]:
        """``push`` with each chunk's emotion."""
        chunks: list[Spoken] = []
        self._raw += token
        while "\n" in self._raw:
            self._raw, _, rest = self._raw.partition("\n")
            self._drain(final=True)
            chunks += self._segment(final=True)
            self._raw = rest
            self._line_start, self._skip_line, self._tail = True, False, ""
        self._drain(final=False)
        return chunks + self._segment(final=False)

    def finish(self) -> list[Spoken]:
        """``flush`` with each chunk's emotion."""
        self._drain(final=True)
        chunks = self._segment(final=True, end_of_reply=True)
        self._reset()
        return chunks

    def _drain(self, final: bool) -> None:
        """Move the resolved prefix of the current line, cleaned, into the pending text."""
        raw, pos = self._raw, 0
        if self._line_start:
            if not final and MARKER_PREFIX.fullmatch(raw):
                return  # "1" may become "1. " and "-" may become "- "
            self._line_start = False
            self._skip_line = raw.lstrip().startswith("```")
            marker = LINE_MARKER.match(raw)
            pos = marker.end() if marker else 0
        if self._skip_line:
            self._raw = ""
            return
        marks: Marks = []
        text, pos, self._tail = clean_inline(raw, pos, final, self._tail, marks)
        self._moods.add(len(self._pending), marks)
        self._pending += text
        self._raw = raw[pos:]

    def _segment(self, final: bool, end_of_reply: bool = False) -> list[Spoken]:
        chunks: list[Spoken] = []
        while (end := self._find_end(self._pending, final)) is not None:
            self._emit(self._pending[:end], self._moods.take(end), chunks)
            self._pending = self._pending[end:]
        if final:  # the end of a line or reply ends the chunk
            mood = self._moods.take(len(self._pending) + 1)
            self._emit(self._pending, mood, chunks, end_of_reply)
            self._pending = ""
        return chunks

    def _emit(self, piece: str, mood: Emotion | None, chunks: list[Spoken],
              last: bool = False) -> None:
        mood = self._carry_mood if self._carry else mood
        piece = strip_tags(" ".join(piece.split()))  # "[hap*p*y]" is "[happy]" once cleaned
        glue = "" if self._carry and piece and is_cjk(self._carry[-1]) else " "
        text = _SPACE_BEFORE_MARK.sub("", f"{self._carry}{glue}{piece}".strip())
        if not any(ch.isalnum() for ch in text):
            return  # nothing to say ("---", a lone "*")
        if len(text) < self._config.min_chunk_chars and not last:
            self._carry, self._carry_mood = text, mood  # spoken with the next chunk
            return
        inside, self._cut_inside = self._cut_inside, False
        chunks.append(Spoken(text, mood, not inside and ends_sentence(text)))
        self._carry = ""
        self._words += len(text.split())
        self._cjk += cjk_count(text)
        self._after_clause = (
            (inside or text[-1] in _CLAUSE_MARKS or self._under_a_second())
            and self._words < self._config.clause_split_words
            and self._cjk < self._config.clause_split_chars
        )

    def _under_a_second(self) -> bool:
        """Fewer words out than ``first_chunk_break_words`` (none, or a short "Sure!"): the
        next chunk should be short too, or the voice runs out before it is synthesized."""
        return self._cjk == 0 and self._words < self._config.first_chunk_break_words

    def _find_end(self, text: str, final: bool) -> int | None:
        """End of the first confirmed chunk in text; None to wait for more."""
        lead = skip_spaces(text, 0)
        limit = lead + self._config.max_chunk_chars
        pos = lead
        while pos < len(text):
            if pos >= limit:
                self._cut_inside = True
                return forced_end(text, lead, limit)
            verdict: bool | None
            if text[pos] in SENTENCE_ENDS:
                run_end = end_of_run(text, pos, SENTENCE_ENDS)
                if run_end - pos > _MAX_MARK_RUN:  # "？？？？…" from a looping model: end here
                    return pos + _MAX_MARK_RUN
                end = end_of_run(text, run_end, _CLOSERS)
                verdict = ends_sentence_here(text, pos, run_end, end, final)
            elif text[pos] in _CLAUSE_MARKS:
                end = end_of_run(text, pos, _CLAUSE_MARKS)
                verdict = self._clause_end(text, pos, end, final)
            elif text[pos].isspace() and self._after_clause:
                if self._opener_break(text, lead, pos):
                    self._cut_inside = True
                    return pos  # the chunk ends before the space and the opener
                pos += 1
                continue
            else:
                verdict = self._particle_break(text, lead, pos)
                if verdict is None or verdict:
                    self._cut_inside = bool(verdict)
                    return None if verdict is None else pos + 1
                pos += 1
                continue
            if verdict is None or verdict:
                return None if verdict is None else end
            pos = end
        return None

    def _particle_break(self, text: str, lead: int, pos: int) -> bool | None:
        """A Japanese first chunk ends after a particle once it is a second long
        (``particle_breaks``); later chunks wait for their marks."""
        config = self._config
        if (not self._after_clause or config.first_chunk_break_words <= 0
                or self._cjk >= config.first_clause_min_chars):
            return False
        return after_particle(text, lead, pos, config.first_clause_min_chars)

    def _opener_break(self, text: str, lead: int, space: int) -> bool:
        """Whether an early chunk ends at the space text[space], before a clause opener (or,
        once it is long, a preposition). An opener is known only once a space follows it
        ("and" may become "android"); until then this says no, and the next token's rescan
        of the pending text decides."""
        start = skip_spaces(text, space)
        if start < len(text) and text[start].isdigit():
            config = self._config
            return long_number_break(text, lead, space, start, config.number_break_min_words,
                                     config.long_number_digits)
        end = word_end(text, start)
        if end == len(text) or not text[end].isspace():
            return False  # not complete yet, or "and." / "but," / "and-"
        config, opener = self._config, text[start:end].lower().replace("\u2019", "'")
        needed: int | None = None  # words the chunk needs before this opener
        if opener in config.clause_openers:
            needed = config.opener_break_min_words
        elif opener in config.phrase_openers:
            needed = config.phrase_break_min_words
        if self._under_a_second() and opener in config.first_chunk_openers:
            first = config.first_chunk_break_words  # the reply's first words
            needed = first if needed is None else min(needed, first)
        if needed is None:
            return False
        follower = skip_spaces(text, end)
        if follower + 1 >= len(text):
            return False  # wait for the start of the word after it
        pronoun = text[follower] == "I" and not text[follower + 1].isalpha()  # "and I'm"
        if text[follower].isupper() and not pronoun:
            return False  # "Romeo and Juliet", "salt and Pepper Co.": a name, not a clause
        return spoken_words(text[lead:space]) >= needed

    def _clause_end(self, text: str, start: int, end: int, final: bool) -> bool | None:
        """Whether the clause marks text[start:end] end a chunk (None: wait for more)."""
        config = self._config
        head = text[:end]
        words = spoken_words(head)
        cjk = cjk_count(head)
        min_chars = config.first_clause_min_chars
        if script_language(head) == "zh":
            cjk += 2 * len(_DIGIT_RUN.findall(head))
            min_chars = config.first_clause_min_chars_zh
        early = self._after_clause and (
            words >= config.first_clause_min_words or cjk >= min_chars)
        long = words >= config.later_clause_min_words or cjk >= config.later_clause_min_chars
        if not (early or long):
            return False
        follower_at = skip_spaces(text, end)
        if follower_at == len(text):
            return True if final else None
        if text[end - 1] not in _SPACED_CLAUSE_MARKS or follower_at > end:
            return True
        # "2,000" and "3:45" stay whole; "好的,我们" (a CJK comma typed half-width) splits
        return start > 0 and is_cjk(text[start - 1]) and not text[follower_at].isdigit()


def ends_sentence(chunk: str) -> bool:
    """True when a gate chunk ends a sentence, False for a clause ("そうですね、"): a
    reply cap counted in sentences should count only these (CJK replies are cut at
    clauses more often than English ones, so counting chunks would cut them short)."""
    return chunk.rstrip(_CLOSERS)[-1:] not in _CLAUSE_MARKS


def speakable_text(text: str) -> str:
    """The gate's cleaning applied to a whole text: what would be spoken, on one line."""
    gate = SentenceGate()
    return " ".join(gate.push(text) + gate.flush())
