"""The TTS stage: reply chunks in, audio into the playback queue, on its own thread.

Voices, speed and languages change here between chunks (``SetVoice``, ``SetLanguages``),
so the engine is only ever touched by this thread. Each chunk's leading padding is cut
(``voice_edges``): before the first words it is only waiting.
"""

from __future__ import annotations

import logging
from typing import assert_never

from app.core.acknowledgement import PrepareAcknowledgements
from app.core.events import FloatAudio, ReplyChunk, SpeechAudio
from app.core.languages import speaking_language
from app.core.mouth_track import MouthTrack, mouth_track
from app.core.playback import PlaybackQueue
from app.core.ports import (
    ChoosesVoice,
    Clock,
    Phonemizes,
    ReportsNotices,
    SpeaksLanguages,
    SpeechSynthesizer,
)
from app.core.stage_jobs import EndOfReply, SetLanguages, SetVoice
from app.core.telemetry import EngineNotice
from app.core.visemes import Syllable, syllables
from app.core.voice_edges import without_lead
from app.core.worker import HEAVY_WORK_NICENESS, LiveTurn, Publish, Worker

log = logging.getLogger(__name__)

SynthesizerJob = ReplyChunk | EndOfReply | SetVoice | SetLanguages | PrepareAcknowledgements


class Synthesizer(Worker[SynthesizerJob]):
    name = "tts"
    niceness = HEAVY_WORK_NICENESS

    def __init__(
        self,
        publish: Publish,
        tts: SpeechSynthesizer,
        live: LiveTurn,
        clock: Clock,
        playback: PlaybackQueue,
    ) -> None:
        super().__init__(publish)
        self.tts, self.live, self.clock, self.playback = tts, live, clock, playback
        self.main_language = "en"
        """The persona's main language: what a chunk with no language of its own is in."""

    def handle(self, item: SynthesizerJob) -> None:
        try:
            self._handle(item)
        finally:
            if isinstance(item, ReplyChunk) and item.index == 0:
                self.live.first_audio_done.set()  # the responder decodes on
            self._publish_notices()

    def _handle(self, item: SynthesizerJob) -> None:
        match item:
            case EndOfReply():
                self.playback.finish(item.turn_id)
            case SetVoice():
                if isinstance(self.tts, ChoosesVoice) and isinstance(self.tts.voice, str):
                    self.tts.voice = item.voice
                    self.tts.speed = item.speed
            case PrepareAcknowledgements():  # a persona's "Hmm," made ready
                item.run(self.tts)
            case SetLanguages():
                self.main_language = item.languages[0] if item.languages else "en"
                if isinstance(self.tts, SpeaksLanguages):
                    self.tts.prepare(item.languages)
            case ReplyChunk():
                self._speak(item)
            case _:
                assert_never(item)

    def _speak(self, item: ReplyChunk) -> None:
        if not self.live.is_live(item.turn_id):
            return
        if isinstance(self.tts, SpeaksLanguages):  # the chunk's script decides: kana is never
            # read in English
            self.tts.use_language(speaking_language(item.text, item.language or self.main_language))
        samples = without_lead(self.tts.synthesize(item.text), self.tts.sample_rate)
        if not self.live.is_live(item.turn_id):
            return
        self.publish(
            SpeechAudio(
                item.turn_id,
                item.index,
                item.text,
                samples,
                self.tts.sample_rate,
                self.clock.now(),
            )
        )
        self.playback.enqueue(item.turn_id, samples, item.text, item.index, item.emotion,
                              self._mouth(item.text, samples))

    def _mouth(self, text: str, samples: FloatAudio) -> MouthTrack:
        """The chunk's mouth timeline: shapes from the voice's phonemes where it gives
        them, else from the audio's spectrum (a phonemizer that fails only costs that)."""
        nuclei: list[Syllable] | None = None
        if isinstance(self.tts, Phonemizes):
            try:
                nuclei = syllables(self.tts.phonemes(text)) or None
            except Exception:  # the sound plays; the shapes come from it
                log.warning("the voice could not phonemize a chunk: mouth shapes from audio")
        return mouth_track(samples, self.tts.sample_rate, nuclei)

    def _publish_notices(self) -> None:
        """Problems the voices found (a language's voice that fell back to eSpeak), once."""
        if not isinstance(self.tts, ReportsNotices):
            return
        for message in self.tts.take_notices():
            self.publish(EngineNotice(str(message), self.clock.now()))
