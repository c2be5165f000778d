"""Which language a persona speaks, and which language a piece of text is written in.

Personas name languages as BCP-47 tags ("ja", "ja-JP", "zh-Hans-CN", "cmn"); every engine
(Whisper, the voices, the character rules) wants one base code. Text from the LLM is
checked by script before it is spoken, so a reply that switched to Japanese is never read
out by an English voice: kana means Japanese, Han characters without kana mean Chinese
(unless the reply is already Japanese, where kanji-only sentences are common).
"""

from __future__ import annotations

import re

SPEECH_LANGUAGES = ("en", "ja", "zh")
"""Languages the app can hear and speak end to end (ASR, voice, character rules)."""

LANGUAGE_NAMES = {
    "en": "English", "ja": "Japanese", "es": "Spanish", "fr": "French", "de": "German",
    "it": "Italian", "pt": "Portuguese", "zh": "Chinese", "ko": "Korean", "hi": "Hindi",
}
"""English names, for prompts written in English and for the persona editor."""

NATIVE_NAMES = {"en": "English", "ja": "日本語", "zh": "中文"}
"""What the window shows a native speaker (the HUD's detected language)."""

_ALIASES = {
    "cmn": "zh", "yue": "zh", "zho": "zh", "chi": "zh", "jpn": "ja", "eng": "en",
}

_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def base_language(tag: str | None) -> str:
    """``"ja-JP"`` -> ``"ja"``, ``"zh-Hans-CN"``/``"cmn"`` -> ``"zh"``; empty -> ``"en"``."""
    if not tag:
        return "en"
    base = tag.strip().replace("_", "-").split("-")[0].lower()
    return _ALIASES.get(base, base) or "en"


def language_name(tag: str | None) -> str:
    """The English name of a language tag (the tag itself when unknown)."""
    base = base_language(tag)
    return LANGUAGE_NAMES.get(base, tag or base)


def script_language(text: str, context: str | None = None) -> str | None:
    """The language a text must be spoken in, judged by its script, or None for text
    with no CJK characters (any Latin-script language).

    ``context``: the language of the reply so far; Han-only text in a Japanese reply
    stays Japanese."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "ja" if base_language(context) == "ja" else "zh"
    return None


def speaking_language(text: str, expected: str) -> str:
    """The voice language for ``text`` in a reply expected in ``expected``: the script
    decides for CJK text, except in an English sentence that quotes a CJK word (the
    English voice speaks it, the word in its own voice: ``script_runs``); Latin text in a
    CJK reply (a name, "OK") stays with the reply's voice unless it is mostly words."""
    expected = base_language(expected)
    by_script = script_language(text, expected)
    latin_words = len(_LATIN_WORD.findall(text))
    if by_script is not None:
        return "en" if expected == "en" and latin_words >= ENGLISH_AROUND_WORDS else by_script
    if expected in ("ja", "zh") and latin_words >= ENGLISH_AROUND_WORDS:
        return "en"
    return expected


ENGLISH_AROUND_WORDS = 3
"""Latin words that make a mixed chunk an English sentence (fewer: a name, "OK")."""
_CJK_RUN = re.compile(
    r"[\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    r"\uff01-\uff9f]+"
)
"""Kana, Han, CJK punctuation and full-width forms: what only a CJK voice can read."""


def script_runs(text: str, context: str | None = None) -> list[tuple[str, str]]:
    """An English sentence with CJK words in it, cut where the script changes, each run
    with the language whose voice reads it: 'Thank you is ありがとう (arigatou).' ->
    ``[("en", "Thank you is"), ("ja", "ありがとう"), ("en", "(arigatou).")]``. All CJK
    runs take the sentence's CJK language (any kana: Japanese). Runs with no letter or
    character to say (a lone bracket) are left out."""
    cjk = script_language(text, context)
    if cjk is None:
        return [("en", text)] if any(ch.isalnum() for ch in text) else []
    runs: list[tuple[str, str]] = []
    position = 0

    def add(language: str, piece: str) -> None:
        piece = piece.strip()
        if not any(ch.isalnum() for ch in piece):
            return
        if runs and runs[-1][0] == language:
            runs[-1] = (language, f"{runs[-1][1]} {piece}")
        else:
            runs.append((language, piece))

    for match in _CJK_RUN.finditer(text):
        add("en", text[position:match.start()])
        add(cjk, match.group())
        position = match.end()
    add("en", text[position:])
    return runs


_REPLY_NOTES = {
    "en": "(The user is speaking English: answer in English.)\n",
    "ja": "（ユーザーは日本語で話しています。日本語で答えてください。）\n",
    "zh": "（用户正在说中文，请用简体中文回答。）\n",
}


def reply_language_note(language: str) -> str:
    """A short per-turn instruction, in the language itself, for personas that answer in
    whichever of several languages the user just spoke (put before the user's words, never
    kept in the history, so the cached prefix stays the same)."""
    base = base_language(language)
    return _REPLY_NOTES.get(base, f"(Answer in {language_name(base)}.)\n")
