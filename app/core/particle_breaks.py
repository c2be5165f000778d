"""Where a Japanese reply's first chunk may end without a comma: after a particle.

English first chunks may be cut before a word that opens a clause or a phrase (``GateConfig.
first_chunk_openers``); Japanese has no spaces, but its phrases end in a particle, and a
speaker may pause after one (「週末に | 友達と映画を見ました。」). Without this the first audio
waits for the first 、 or 。, which a model may write many characters in, each decoded and
then synthesized before a word is heard (measured: docs/latency.md).

Only particles that follow a kanji or a katakana word are taken: after hiragana the same
character is as often inside a word (「ことが」 is safe, 「ながら」 is not, and nothing here
can tell them apart). The character after the particle must be known and must not carry
it on: 「には」「では」「にも」「での」 are one particle, 「勉強で|きる」「会議で|す」 are no break.
Mandarin has no such marks; its first chunk still waits for a comma.
"""

from __future__ import annotations

from app.core.markup import cjk_count, is_cjk

PARTICLES = frozenset("はがをにでともへ")
"""Case and topic particles that end a phrase."""
_GOES_ON = frozenset("はものすしきっ")
"""Characters that make the particle part of something longer when they follow it."""


def _is_word_end(ch: str) -> bool:
    """A kanji (or 々) or a katakana: the end of a content word."""
    return ("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or ch == "\u3005"
            or "\u30a0" <= ch <= "\u30ff")


def after_particle(text: str, lead: int, pos: int, min_chars: int) -> bool | None:
    """Whether a first chunk that starts at ``lead`` may end after the particle at
    ``text[pos]`` once it has ``min_chars`` CJK characters; None while the character after
    it has not arrived (the gate asks again with the next token)."""
    if text[pos] not in PARTICLES or pos == lead or not _is_word_end(text[pos - 1]):
        return False
    if cjk_count(text[lead:pos + 1]) < min_chars:
        return False
    if pos + 1 == len(text):
        return None
    follower = text[pos + 1]
    return is_cjk(follower) and follower not in _GOES_ON
