"""Phonemes to mouth shapes: English (espeak-ng's IPA, as Piper gives it), Japanese and
Mandarin (misaki's, as Kokoro's paths give them). The strings are what the phonemizers
returned for these sentences (tests/adapters/test_mouth_shapes_real.py asks them live)."""

# ruff: noqa: RUF001, RUF003 (IPA letters look like Latin ones: they are meant)

from __future__ import annotations

from app.core.visemes import Syllable, Viseme, openness, syllables

A, I, U, E, O = Viseme.A, Viseme.I, Viseme.U, Viseme.E, Viseme.O  # noqa: E741


def shapes(phonemes: str) -> list[Viseme]:
    return [s.viseme for s in syllables(phonemes)]


def test_english_vowels_diphthongs_and_lip_closures() -> None:
    # "Hello there, how are you doing today?" from Piper's espeak-ng
    found = syllables("həlˈoʊ ðˈɛɹ, hˌaʊ ɑːɹ juː dˌuːɪŋ tədˈeɪ?")
    assert [s.viseme for s in found] == [A, O, E, A, A, U, U, A, E]
    assert found[1].glide is U  # o -> ʊ: the lips round on
    assert found[3].glide is U  # a -> ʊ
    assert found[6].glide is I  # duːɪŋ: u glides to i
    # "Maybe bread, food": m, b, f close the lips before their vowels; a vowel after
    # another consonant does not
    closes = [s.closed_before for s in syllables("mˈeɪbi bɹˈɛd, fˈuːd, tˈiː")]
    assert closes == [True, True, True, True, False]


def test_japanese_misaki_phonemes() -> None:
    # こんにちは、今日はいい天気ですね: ko ɲɲi ʨi βa / kʲoː βa ii teŋ kʲi de sɨ ne
    assert shapes("koɲɲiʨiβa, kʲoː βa ii teŋkʲi desɨ ne.") == [
        O, I, I, A, O, A, I, E, I, E, U, E]


def test_mandarin_misaki_phonemes_with_tone_arrows() -> None:
    # 你好，今天天气很好: the arrows are tones, not sounds; xau is a glide a -> u
    found = syllables("ni↓xau↓, ʨi→ntʰjɛ→ntʰjɛ→nʨʰi↘ xə↓n xau↓.")
    assert [s.viseme for s in found] == [I, A, I, E, E, I, A, A]
    assert found[1] == Syllable(A, U, False)


def test_nothing_to_say_has_no_syllables() -> None:
    assert syllables("") == []
    assert syllables("... , ?!") == []
    assert syllables("pst") == []


def test_open_shapes_open_wider_than_narrow_ones() -> None:
    assert openness(A) > openness(O) > openness(I) > openness(Viseme.CLOSED)
    assert openness(E) > openness(U)
