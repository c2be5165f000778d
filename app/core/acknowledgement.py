"""The late-first-audio acknowledgement: "Hmm," when the answer is slow to start.

A reply whose first audio is not ready a persona-set time after the user stopped speaking
(1.2 s by default) starts with a short acknowledgement instead of silence. The phrases are
synthesized once, on the TTS thread, when the persona loads, so playing one costs nothing
at the moment it is needed. The rule is pure and single-threaded (the pipeline's
controller thread owns it):

- a deadline starts when the turn is confirmed, counted from the end of the user's speech
  (what the user feels, and what voice-to-voice is measured from);
- the first answer audio, the user speaking again, or the turn ending cancels it;
- it fires at most once per turn and never on two consecutive turns (an assistant that
  says "Hmm," every time sounds like a machine);
- the acknowledgement plays as part of the turn's audio, so a barge-in cuts it like any
  reply, but it is never part of what the user heard in the history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from app.core.acknowledgement_rule import AcknowledgementRule
from app.core.events import (
    Acknowledged,
    FloatAudio,
    PipelineEvent,
    PlaybackEnded,
    ReplyChunk,
    SpeechAudio,
    SpeechStarted,
    TurnCancelled,
    TurnConfirmed,
)
from app.core.mouth_track import MouthTrack, mouth_track
from app.core.ports import SpeaksLanguages
from app.core.voice_edges import trim_silence

DEFAULT_AFTER_S = 1.2
DEFAULT_PHRASES: dict[str, tuple[str, ...]] = {
    "en": ("Hmm,", "Let me see..."),
    "ja": ("えっと、", "うーん、"),
    "zh": ("嗯，", "让我想想…"),
}
"""Per base language code; a language without its own falls back to English."""
DEFAULT_TOOL_LINES: dict[str, tuple[str, ...]] = {
    "en": ("One moment, I'm on it.", "Just a second, checking."),
    "ja": ("ちょっと待ってね。", "いま確認してるね。"),
    "zh": ("稍等一下。", "我正在查。"),
}
"""Said when a tool the model called is slow (``tool_rounds.ToolWait``)."""


def default_phrases(language: str) -> tuple[str, ...]:
    """The built-in phrases for a language code such as "ja" or "en-GB"."""
    base = language.split("-")[0].split("_")[0].lower()
    return DEFAULT_PHRASES.get(base, DEFAULT_PHRASES["en"])


def default_tool_lines(language: str) -> tuple[str, ...]:
    """The built-in lines for a slow tool, for a language code such as "zh-CN"."""
    base = language.split("-")[0].split("_")[0].lower()
    return DEFAULT_TOOL_LINES.get(base, DEFAULT_TOOL_LINES["en"])


class _Synthesizes(Protocol):
    sample_rate: int

    def synthesize(self, text: str) -> FloatAudio: ...


MADE_KEPT = 64


def voice_key(tts: object, language: str) -> str:
    """What makes a phrase sound different: the voice, its speed, its sample rate and
    the language it is spoken in."""
    return repr((getattr(tts, "voice", None), getattr(tts, "speed", None),
                 getattr(tts, "sample_rate", None), language))


@dataclass(frozen=True)
class Sound:
    text: str
    samples: FloatAudio
    track: MouthTrack | None = None
    """Its mouth timeline, made with it on the TTS thread (shapes from the spectrum)."""
    seconds: float = 0.0
    """How long it plays: an answer ready before it would end is not kept waiting by it."""


@dataclass(frozen=True)
class _Prepared:
    after_s: float
    sounds: tuple[Sound, ...]


class AcknowledgementSounds:
    """The persona's phrases as audio: written on the TTS thread (``prepare``), read on
    the controller thread. A new set replaces the old one in a single assignment, so a
    reader sees either the old set or the new one, never half of each."""

    def __init__(self) -> None:
        self._prepared = _Prepared(DEFAULT_AFTER_S, ())
        self._next = 0
        self._made: dict[tuple[str, str], Sound | None] = {}
        """Phrases made before, by voice and text: a switch back to a persona does not
        synthesize them again (Kokoro spent 1.5 s on Yui's two on two cores)."""

    @property
    def after_s(self) -> float:
        return self._prepared.after_s

    def ready(self) -> bool:
        return bool(self._prepared.sounds)

    def prepare(self, tts: _Synthesizes, phrases: tuple[str, ...], after_s: float,
                language: str = "en") -> None:
        """Synthesize every phrase now (TTS thread). A phrase that fails or comes out
        silent is skipped: an acknowledgement is a nicety, never a fault."""
        sounds = []
        voice = voice_key(tts, language)
        for phrase in phrases:
            key = (voice, phrase)
            if key not in self._made:
                try:
                    samples = trim_silence(np.asarray(tts.synthesize(phrase), np.float32),
                                           tts.sample_rate)
                except Exception:  # the reply itself will report a broken voice
                    continue
                self._made[key] = (Sound(phrase, samples, mouth_track(samples, tts.sample_rate),
                                         samples.size / tts.sample_rate)
                                   if samples.size else None)
            sound = self._made[key]
            if sound is not None:
                sounds.append(sound)
        if len(self._made) > MADE_KEPT:
            self._made.clear()  # a long evening of voices tried: start again
        self._prepared = _Prepared(after_s, tuple(sounds))

    def clear(self) -> None:
        self._prepared = _Prepared(DEFAULT_AFTER_S, ())

    def next(self) -> Sound | None:
        """The phrases in turn, so the same one is not heard twice running."""
        sound = self.peek()
        self._next += sound is not None
        return sound

    def peek(self) -> Sound | None:
        """The phrase ``next`` gives, left where it is."""
        sounds = self._prepared.sounds
        return sounds[self._next % len(sounds)] if sounds else None


@dataclass(frozen=True)
class PrepareAcknowledgements:
    """A job for the synthesizer: make the persona's phrases ready in its current voice
    (on the TTS thread, never the GUI thread), in ``language`` where the engine has
    per-language voices."""

    sounds: AcknowledgementSounds
    phrases: tuple[str, ...]
    after_s: float
    language: str = "en"

    def run(self, tts: _Synthesizes) -> None:
        if isinstance(tts, SpeaksLanguages):
            tts.use_language(self.language.split("-")[0].lower())
        self.sounds.prepare(tts, self.phrases, self.after_s, self.language)


class _Playback(Protocol):
    def acknowledge(self, turn_id: int, samples: FloatAudio, text: str,
                    track: MouthTrack | None = None) -> bool: ...


class Acknowledger:
    """The rule wired to the pipeline (controller thread): it watches the turn's events,
    and at the deadline queues the next phrase in front of the turn's audio."""

    def __init__(
        self,
        playback: _Playback,
        is_live: Callable[[int], bool],
        publish: Callable[[PipelineEvent], None],
    ) -> None:
        self.rule = AcknowledgementRule()
        self.sounds = AcknowledgementSounds()
        self._playback, self._is_live, self._publish = playback, is_live, publish

    def job(
        self, phrases: tuple[str, ...], after_s: float, language: str
    ) -> PrepareAcknowledgements:
        """The synthesizer job that makes a persona's phrases ready."""
        return PrepareAcknowledgements(self.sounds, phrases, after_s, language)

    def observe(self, event: PipelineEvent) -> None:
        match event:
            case TurnConfirmed() if self.sounds.ready():
                self.rule.arm(event.turn_id, event.speech_end + self.sounds.after_s)
            case ReplyChunk() if event.index == 0:
                self.rule.voice_started(event.turn_id, event.at)
            case SpeechAudio():
                self.rule.answer_queued(event.turn_id, event.at)
            case SpeechStarted():
                self.rule.cancel()
            case TurnCancelled() | PlaybackEnded():
                self.rule.cancel(event.turn_id)
            case _:
                pass

    def wait_s(self, now: float) -> float | None:
        return self.rule.wait_s(now)

    def tick(self, now: float) -> None:
        """Queue the acknowledgement if its deadline has come."""
        coming = self.sounds.peek()
        turn_id = self.rule.due(now, coming.seconds if coming is not None else 0.0)
        if turn_id is None:
            return
        sound = self.sounds.next() if self._is_live(turn_id) else None
        if sound is None or not self._playback.acknowledge(turn_id, sound.samples, sound.text,
                                                           sound.track):
            self.rule.withdraw(turn_id)
            return
        self._publish(Acknowledged(turn_id, sound.text, now))
