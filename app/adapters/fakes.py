"""Scripted fakes of every engine port, selectable at run time with ``--fake-engines``.

They are deterministic and instant, so pipeline and UI tests need no model files, yet
they behave like the real engines where the pipeline cares: the VAD follows the audio's
energy, the LLM streams token by token and honours cancellation, the synthesizer returns
audio whose length depends on the text.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from app.core.events import FloatAudio
from app.core.ports import ChatMessage, PromptStats


class FakeVoiceActivity:
    """Energy detector: speech probability rises with the frame's RMS level."""

    frame_size = 512

    def __init__(self, speech_rms: float = 0.02) -> None:
        self._speech_rms = speech_rms

    def probability(self, frame: FloatAudio) -> float:
        rms = float(np.sqrt(np.mean(np.square(frame)))) if frame.size else 0.0
        return min(1.0, rms / self._speech_rms * 0.5)

    def reset(self) -> None:
        return None


class FakeRecognizer:
    """Returns the scripted transcripts in order (the last one repeats); '' for silence."""

    def __init__(self, transcripts: Sequence[str] = ("Hello, who are you?",)) -> None:
        self._transcripts = list(transcripts) or [""]
        self._next = 0
        self.calls = 0

    def transcribe(self, audio: FloatAudio) -> str:
        self.calls += 1
        if audio.size == 0 or float(np.max(np.abs(audio))) < 1e-3:
            return ""
        text = self._transcripts[min(self._next, len(self._transcripts) - 1)]
        self._next += 1
        return text


class FakeLanguageModel:
    """Streams a scripted reply one word per token and simulates llama.cpp prefix reuse.

    ``reply`` may be several replies: one per call, in turn, the last one repeating."""

    def __init__(
        self,
        reply: str | Sequence[str] = (
            "I am Hanasu, a voice companion. It is nice to meet you! What shall we talk about?"
        ),
        token_delay_s: float = 0.0,
    ) -> None:
        self._replies = [reply] if isinstance(reply, str) else list(reply)
        self._token_delay_s = token_delay_s
        self._cached_prompt = ""
        self.prompts: list[list[ChatMessage]] = []
        self.tokens_after_cancel = 0
        self.temperature: float | None = None

    @staticmethod
    def _render(messages: Sequence[ChatMessage]) -> str:
        return "".join(f"<{m.role}>{m.content}</{m.role}>" for m in messages)

    def _evaluate(self, messages: Sequence[ChatMessage]) -> PromptStats:
        prompt = self._render(messages)
        common = 0
        for a, b in zip(prompt, self._cached_prompt, strict=False):
            if a != b:
                break
            common += 1
        self._cached_prompt = prompt
        return PromptStats(prompt_tokens=len(prompt), reused_tokens=common)

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        return self._evaluate(messages)

    def set_temperature(self, temperature: float | None) -> None:
        """Recorded so tests can see a persona's setting arrive (None: the default)."""
        self.temperature = temperature

    def stream(
        self,
        messages: Sequence[ChatMessage],
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        self.prompts.append(list(messages))
        stats = self._evaluate(messages)
        if on_prompt is not None:
            on_prompt(stats)
        reply = self._replies[min(len(self.prompts), len(self._replies)) - 1]
        words = reply.split(" ")
        for i, word in enumerate(words):
            if cancelled():
                return
            if self._token_delay_s:
                time.sleep(self._token_delay_s)
            yield word if i == 0 else " " + word


class FakeSynthesizer:
    """A soft tone whose duration grows with the text (about 60 ms per character)."""

    def __init__(self, sample_rate: int = 16_000, seconds_per_char: float = 0.06) -> None:
        self.sample_rate = sample_rate
        self._seconds_per_char = seconds_per_char
        self.texts: list[str] = []

    def synthesize(self, text: str) -> FloatAudio:
        self.texts.append(text)
        n = max(1, int(len(text) * self._seconds_per_char * self.sample_rate))
        t = np.arange(n, dtype=np.float32) / self.sample_rate
        tone = 0.3 * np.sin(2 * math.pi * 220.0 * t)
        return tone.astype(np.float32)


class FakeTurnDetector:
    """Always gives the same end-of-turn probability; counts its calls."""

    def __init__(self, probability: float = 0.9) -> None:
        self.probability = probability
        self.calls = 0

    def complete_probability(self, audio: FloatAudio) -> float:
        self.calls += 1
        return self.probability


class FakeSpeakerEncoder:
    """A voice print from pitch alone: the loudest frequency's 50 Hz band, one-hot (tones
    of 180 Hz and 300 Hz are two voices, cosine 0; silence gives zeros)."""

    bands = 256  # the real encoder's size, so its prints can be stored

    def embed(self, audio: FloatAudio) -> FloatAudio:
        vector = np.zeros(self.bands, dtype=np.float32)
        if audio.size == 0 or float(np.max(np.abs(audio))) < 1e-4:
            return vector
        spectrum = np.abs(np.fft.rfft(audio))
        peak_hz = float(np.argmax(spectrum)) * 16_000 / audio.size
        vector[min(self.bands - 1, int(peak_hz // 50))] = 1.0
        return vector
