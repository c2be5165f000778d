"""The recognizer's stage: a turn's words (and whose voice said them), and the transcript
made ahead of the pause (``transcript_ahead``)."""

from __future__ import annotations

import logging

from app.core.background_voice import BackgroundVoice
from app.core.endpointing import EndpointConfig
from app.core.events import FloatAudio, Transcript
from app.core.languages import base_language, script_language
from app.core.ports import (
    PIPELINE_SAMPLE_RATE,
    Clock,
    ExpectsNames,
    PinsLanguages,
    ReportsLanguage,
    SpeakerEncoder,
    SpeechRecognizer,
)
from app.core.stage_jobs import LearnVoice, SetLanguages, SetVoiceGate, TranscribeAhead
from app.core.telemetry import VoiceLearnt
from app.core.transcript_ahead import AheadTranscript, TranscriptsAhead
from app.core.turn_commands import StartTurn
from app.core.voice_check import VoiceCheck
from app.core.voice_gate import USER_GOES_ON_S, VoicePrint
from app.core.worker import HEAVY_WORK_NICENESS, LiveTurn, Publish, Worker

log = logging.getLogger(__name__)

TranscriberJob = StartTurn | TranscribeAhead | SetLanguages | SetVoiceGate | LearnVoice


class Transcriber(Worker[TranscriberJob]):
    name = "asr"
    niceness = HEAVY_WORK_NICENESS

    def __init__(self, publish: Publish, asr: SpeechRecognizer, live: LiveTurn, clock: Clock,
                 speaker: SpeakerEncoder | None = None,
                 quiet_tail_s: float = EndpointConfig().pause_ms / 1000,
                 background: BackgroundVoice | None = None):
        """``quiet_tail_s``: the pause after which a turn starts (the audio an ahead
        transcript's turn may have past it)."""
        super().__init__(publish)
        self.asr, self.live, self.clock = asr, live, clock
        self.ahead = TranscriptsAhead(round(quiet_tail_s * PIPELINE_SAMPLE_RATE))
        self.background = background or BackgroundVoice()
        """How loud the user and another voice are (``background_voice``), for the listener."""
        self._user_until: float | None = None
        """Where the last utterance in the user's voice ended (listener's clock)."""
        self.voices = VoiceCheck(speaker)
        """Whose voice each turn is in, judged beside the recognizer (``voice_check``)."""

    def handle(self, item: TranscriberJob) -> None:
        if isinstance(item, TranscribeAhead):
            self._transcribe_ahead(item.audio)
            return
        if isinstance(item, SetLanguages | SetVoiceGate):
            self.ahead.forget()  # heard with other languages or names in mind
        if isinstance(item, SetLanguages):
            if isinstance(self.asr, PinsLanguages):
                self.asr.set_languages(item.languages)
            return
        if isinstance(item, LearnVoice):
            self.voices.learn_voice(item.on)
            return
        if isinstance(item, SetVoiceGate):
            self.voices.gate = item.gate
            if isinstance(self.asr, ExpectsNames):  # only with voices enrolled: unchanged else
                self.asr.expect_names(item.gate.names if item.gate.active else ())
            return
        assert isinstance(item, StartTurn)  # the turn machine's command is the job
        if not self.live.is_live(item.turn_id):
            return
        if item.typed is not None:
            self.publish(Transcript(item.turn_id, item.typed, self.clock.now(),
                                    script_language(item.typed)))
            return
        # on its own thread, beside the recognizer; a reopened turn's words are not judged
        own_audio = item.audio[item.voice_from:]
        voice = self.voices.start(own_audio)
        going_on = (self._goes_on(item.ends_at, own_audio.size)  # a print to judge leniently
                    or self.background.over_it(own_audio, self.clock.now()))
        ahead = self.ahead.take(item.audio)
        text, heard = (ahead.text, ahead.language) if ahead is not None else self._words(item.audio)
        if voice.ignores(text, going_on):  # someone else's words go no further than here
            self.background.heard_other(own_audio, self.clock.now())
            if self.live.is_live(item.turn_id):
                self.publish(Transcript(item.turn_id, "", self.clock.now(), other_voice=True))
            return
        if text.strip():  # a request with words: a sample of the user's voice, if learning
            self.voices.sample(voice, item.audio.size - item.voice_from, self._learnt)
            if voice.known(going_on):
                self._user_until = item.ends_at
            if voice.known():  # not a fragment let through as the user going on
                self.background.heard_user(own_audio)
        language = base_language(heard) if text.strip() and heard else None
        if self.live.is_live(item.turn_id):
            self.publish(Transcript(item.turn_id, text, self.clock.now(), language))

    def _goes_on(self, ends_at: float | None, samples: int) -> bool:
        """Whether an utterance of ``samples`` ending at ``ends_at`` began right after the
        last one in the user's voice (``voice_gate.USER_GOES_ON_S``)."""
        if ends_at is None or self._user_until is None:
            return False
        return ends_at - samples / PIPELINE_SAMPLE_RATE - self._user_until <= USER_GOES_ON_S

    def _words(self, audio: FloatAudio) -> tuple[str, str | None]:
        """The recognizer's text of ``audio`` and the language it heard (None: unknown)."""
        text = self.asr.transcribe(audio)
        heard = self.asr.last_language if isinstance(self.asr, ReportsLanguage) else None
        return text, heard

    def _transcribe_ahead(self, audio: FloatAudio) -> None:
        """Transcribe the utterance at its first quiet frame, unless something newer waits
        (another utterance, or the pause's own turn: that one transcribes as before). A
        failure here is only logged: the turn, if one comes, tries again and reports it."""
        if not self.inbox.empty():
            return
        try:
            text, heard = self._words(audio)
        except Exception:
            log.debug("transcript ahead of the pause failed", exc_info=True)
            return
        self.ahead.keep(AheadTranscript(audio, text, heard))

    def _learnt(self, voice: VoicePrint) -> None:
        self.publish(VoiceLearnt(voice, self.clock.now()))

    def stop(self, timeout: float = 5.0) -> None:
        super().stop(timeout)
        self.voices.close()
