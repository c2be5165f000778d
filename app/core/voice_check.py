"""The transcriber's voice check: a turn's voice print is made on a helper thread while the
recognizer listens to the same audio, so the check adds little to the time to the words
(the encoder and CTranslate2 both leave Python's lock while they compute). While the user
lets it learn their voice and nobody is enrolled, each request's print is also a sample
for the learner (``voice_learning``), taken on that helper thread, never waited for."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from app.core.events import FloatAudio
from app.core.ports import PIPELINE_SAMPLE_RATE, SpeakerEncoder
from app.core.voice_gate import VoiceGate, VoicePrint
from app.core.voice_learning import VoiceLearner
from app.core.worker import HEAVY_WORK_NICENESS, lower_this_threads_priority

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PendingVoice:
    """One utterance's voice print on its way, and the gate it will be judged by."""

    gate: VoiceGate
    embedding: Future[FloatAudio | None] | None = None

    def ignores(self, text: str, going_on: bool = False) -> bool:
        """Wait for the print; whether the words are for someone other than the companion
        (``going_on``: the speech began right after the user's own)."""
        if self.embedding is None or not self.gate.active:
            return False
        return self.gate.ignores(self.embedding.result(), text, going_on)

    def known(self, going_on: bool = False) -> bool:
        """Wait for the print; whether it is an enrolled (or learnt) voice."""
        if self.embedding is None or not self.gate.active:
            return False
        embedding = self.embedding.result()
        return embedding is not None and self.gate.known(embedding, going_on)


class VoiceCheck:
    def __init__(self, encoder: SpeakerEncoder | None) -> None:
        self.encoder = encoder
        self.gate = VoiceGate()
        self.learner: VoiceLearner | None = None
        self._learning = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    @property
    def can_check(self) -> bool:
        return self.encoder is not None

    @property
    def learning(self) -> bool:
        return self.learner is not None and not self.gate.active

    def learn_voice(self, on: bool) -> None:
        with self._learning:
            if not on:
                self.learner = None
            elif self.learner is None:
                self.learner = VoiceLearner()

    def start(self, audio: FloatAudio) -> PendingVoice:
        """Begin the voice print of ``audio`` (when voices are enrolled, or learnt)."""
        if self.encoder is None or not (self.gate.active or self.learning) or audio.size == 0:
            return PendingVoice(self.gate)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="voice-print",
                                            initializer=lower_this_threads_priority,
                                            initargs=(HEAVY_WORK_NICENESS,))
        return PendingVoice(self.gate, self._pool.submit(self._embed, self.encoder, audio))

    def sample(self, voice: PendingVoice, samples: int,
               learnt: Callable[[VoicePrint], None]) -> None:
        """A request's print, once made, for the learner; ``learnt`` is called (on the helper
        thread) with the user's print when the learner has one."""
        learner = self.learner
        if learner is None or voice.gate.active or voice.embedding is None:
            return

        def add(done: Future[FloatAudio | None]) -> None:
            embedding = None if done.cancelled() else done.result()
            if embedding is None:
                return
            with self._learning:
                if self.learner is not learner or self.gate.active:
                    return  # stopped, or someone enrolled meanwhile
                made = learner.add(embedding, samples / PIPELINE_SAMPLE_RATE, time.time())
                if made is not None:
                    self.learner = None
            if made is not None:
                log.info("learnt the user's voice from %.0f s of requests", made.speech_s)
                learnt(made)

        voice.embedding.add_done_callback(add)

    @staticmethod
    def _embed(encoder: SpeakerEncoder, audio: FloatAudio) -> FloatAudio | None:
        started = time.perf_counter()
        try:
            embedding = encoder.embed(audio)
        except Exception:  # a failed check never drops the user's words
            log.warning("voice print failed; the turn is heard", exc_info=True)
            return None
        log.debug("voice print of %.1f s in %.0f ms", audio.size / 16_000,
                  1000 * (time.perf_counter() - started))
        return embedding

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
