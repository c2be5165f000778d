"""Mouth shapes from phonemes: the six the face draws and which sound shows which.

The phonemizers all speak IPA: Piper and eSpeak through espeak-ng, Kokoro's Japanese and
Mandarin paths through misaki (``koɲɲiʨiβa``, ``ni↓xau↓``). A vowel (or a run of vowels:
a diphthong, a long vowel) is one syllable's nucleus; the lips close for p, b, m and
nearly for f, v, so a syllable remembers whether such a consonant came before its vowel.
The face draws a handful of shapes, so every vowel falls into the nearest of the Japanese
five (the set anime lip-sync uses): a schwa opens like a small "a", a front rounded vowel
rounds like "u".
"""

# ruff: noqa: RUF001 (IPA letters look like Latin ones: they are meant)

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Viseme(StrEnum):
    CLOSED = "closed"
    A = "a"
    I = "i"  # noqa: E741 (the vowel's name)
    U = "u"
    E = "e"
    O = "o"  # noqa: E741 (the vowel's name)


VOWELS: dict[str, Viseme] = {
    **dict.fromkeys("aɑɐæʌäɜɚɝə", Viseme.A),
    **dict.fromkeys("iɪ", Viseme.I),
    **dict.fromkeys("uʊɯɨʉyʏ", Viseme.U),
    **dict.fromkeys("eɛɘ", Viseme.E),
    **dict.fromkeys("oɔɒøœɵɤ", Viseme.O),
}
"""IPA vowel -> the shape. ɨ is misaki's Japanese devoiced "u" (desɨ), ɤ Mandarin's "e"
(said with the lips as for "o"), ə also Mandarin's "e" in xən."""
LIP_CLOSERS = frozenset("pbmɸfvɱ")
"""Consonants said with the lips (nearly) shut."""
ROUNDERS = frozenset("wβ")
"""Consonants said with rounded lips (misaki writes Japanese "w" as β)."""
IGNORED = frozenset("ˈˌːˑ↓↑→↘↗ʲ̃ʰ̩")
"""Stress, length, tone and secondary marks: they belong to the sound around them (a
space is not one: "βa ii" is two syllables, not a glide)."""


@dataclass(frozen=True)
class Syllable:
    """One vowel nucleus: its shape, the shape it glides to (a diphthong's second vowel;
    None when it holds), and whether the lips closed just before it (p, b, m, f, v)."""

    viseme: Viseme
    glide: Viseme | None = None
    closed_before: bool = False


def syllables(phonemes: str) -> list[Syllable]:
    """The syllable nuclei of an IPA string, in order (punctuation and spaces are no
    nuclei; a consonant or a space between two vowels splits them)."""
    found: list[Syllable] = []
    run: list[Viseme] = []
    closed = False

    def flush() -> None:
        nonlocal closed
        if run:
            glide = run[-1] if len(run) > 1 and run[-1] is not run[0] else None
            found.append(Syllable(run[0], glide, closed))
            run.clear()
            closed = False

    for char in phonemes:
        if char in IGNORED:
            continue
        viseme = VOWELS.get(char)
        if viseme is not None:
            run.append(viseme)
            continue
        flush()
        if char in LIP_CLOSERS:
            closed = True
        elif char in ROUNDERS:
            closed = False
    flush()
    return found


def openness(viseme: Viseme) -> float:
    """How far the jaw drops for a shape (0..1), to scale the loudness-driven opening:
    an "i" or a "u" is said through a narrow mouth however loud it is."""
    return _OPENNESS[viseme]


_OPENNESS = {Viseme.CLOSED: 0.0, Viseme.A: 1.0, Viseme.I: 0.45, Viseme.U: 0.4,
             Viseme.E: 0.7, Viseme.O: 0.75}
