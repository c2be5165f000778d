"""Where the sentence gate may cut a streamed reply: its thresholds, in words for spaced
languages and in characters for Japanese and Chinese (``sentences`` applies them)."""

from __future__ import annotations

from dataclasses import dataclass

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
SUBJECT_OPENERS = frozenset(
    {"i", "i'm", "i've", "i'd", "i'll", "you're", "you've", "you'll", "we", "we're", "we've",
     "we'll", "they", "they're", "they've", "they'll", "he", "he's", "she", "she's", "it's",
     "that's", "there's", "let's"}
)
"""Words that can only start a clause as its subject ("you" and "it" may be objects)."""
FIRST_CHUNK_OPENERS = CLAUSE_OPENERS | PHRASE_OPENERS | SUBJECT_OPENERS | {"to"}
"""Where the first chunk may be cut once it is a second long: before a clause, a phrase, a
subject or an infinitive ("I'm so glad | you're enjoying it", "My favourite thing | to do")."""



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
    """The same for Japanese and Chinese, in CJK characters: 「そうですね、」."""
    first_clause_min_chars_zh: int = 7
    """Mandarin's first chunk waits a little longer (a number counts two): the tones of a
    short clause spoken alone come out wrong ("秋天，" heard as "秋甜")."""
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
    first_chunk_break_words: int = 3
    """The reply's first chunk may end before a word of ``first_chunk_openers`` once it has
    this many words (about a second of speech): the first audio then waits for three or
    four words to be decoded and synthesized, not for a whole first sentence, which grows
    as a conversation goes on ("I'm so glad | you're enjoying the ocean tonight."). The
    rest of the sentence is synthesized while those words play. The same holds for the next
    chunk while fewer words than this are out ("Today! | It's a day | of endless..."): a
    long chunk after one short word is not synthesized before that word has been said.
    0 turns these breaks off."""
    first_chunk_openers: frozenset[str] = FIRST_CHUNK_OPENERS
    """Words the first chunk may be cut before, lower case."""
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
