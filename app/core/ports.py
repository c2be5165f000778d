"""The small interfaces every engine implements (real adapters and fakes alike).

Keeping each port to one or two methods is what lets one contract test suite run
against the fake and the real small model, and lets the pipeline stay free of
heavy libraries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from app.core.events import FloatAudio
from app.tools.spec import ToolSpec

PIPELINE_SAMPLE_RATE = 16_000
"""Rate of everything the listener and recognizer see."""


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class PromptStats:
    """Reported by the language model before it yields its first token."""

    prompt_tokens: int
    reused_tokens: int


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on the pipeline timeline."""
        ...


class VoiceActivity(Protocol):
    """Speech probability per fixed-size frame (Silero: 512 samples at 16 kHz)."""

    frame_size: int

    def probability(self, frame: FloatAudio) -> float: ...

    def reset(self) -> None: ...


class SpeechRecognizer(Protocol):
    def transcribe(self, audio: FloatAudio) -> str:
        """Text of 16 kHz mono float32 audio; empty string for no speech."""
        ...


class LanguageModel(Protocol):
    def stream(
        self,
        messages: Sequence[ChatMessage],
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        """Yield the reply piece by piece (one token each); stop as soon as
        ``cancelled()`` is true, checked before every token."""
        ...

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        """Evaluate the prompt prefix now so the next turn starts fast."""
        ...


class SpeechSynthesizer(Protocol):
    sample_rate: int

    def synthesize(self, text: str) -> FloatAudio:
        """Mono float32 audio of ``text`` at ``sample_rate``."""
        ...


class TurnDetector(Protocol):
    """Judges from the audio of an utterance whether the speaker has finished."""

    def complete_probability(self, audio: FloatAudio) -> float: ...


class SpeakerEncoder(Protocol):
    """A voice print of 16 kHz mono speech: a unit vector, close (cosine) for one voice."""

    def embed(self, audio: FloatAudio) -> FloatAudio: ...


class EchoCanceller(Protocol):
    """Removes what the speaker played from what the microphone hears (16 kHz mono).

    Both methods are called from the listener thread, interleaved in arrival order."""

    def add_reference(self, played: FloatAudio) -> None: ...

    def process(self, captured: FloatAudio) -> FloatAudio: ...

    def reset(self) -> None: ...


class PullAudio(Protocol):
    """Called by an audio sink with a frame count; returns exactly that many samples.
    ``plays_at``: when the block's first sample will be heard, on the pipeline clock
    (None: now)."""

    def __call__(self, frames: int, plays_at: float | None = None) -> FloatAudio: ...


class PushAudio(Protocol):
    """Called by an audio source with each captured block (pipeline rate, mono).
    ``captured_at``: when its last sample was captured, on the pipeline clock (None: now)."""

    def __call__(self, samples: FloatAudio, captured_at: float | None = None) -> None: ...


# ---- optional engine features -------------------------------------------------------
# What core uses of an engine beyond its port, declared once: core checks ``isinstance``
# against these instead of probing attribute names, so a renamed method is a type error.


@runtime_checkable
class CallsTools(Protocol):
    """A model that calls tools in its own format (Gemma 4): the declarations go into its
    system turn (written by its chat template), its calls come in the reply text between
    its call markers, and its turn goes on after the app has written each tool's response."""

    def offer_tools(self, specs: Sequence[ToolSpec]) -> bool:
        """Declare ``specs`` from the next prompt on (none: no tools); False when this
        model does not call tools (the rules then answer the built-ins alone)."""
        ...

    def stream_after(
        self,
        messages: Sequence[ChatMessage],
        written: str,
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        """Go on with the reply after ``written``: its own text so far, calls included,
        and the app's responses, in the model's format."""
        ...


@runtime_checkable
class ExpectsNames(Protocol):
    """A recognizer told which names it may hear (the companion's, with voices enrolled):
    Whisper then spells them as written instead of dropping or mishearing them."""

    def expect_names(self, names: Sequence[str]) -> None: ...


@runtime_checkable
class PinsLanguages(Protocol):
    """A recognizer told which languages the user may speak (pin one, detect among several)."""

    def set_languages(self, languages: Sequence[str]) -> None: ...


@runtime_checkable
class ReportsLanguage(Protocol):
    """A recognizer that says which language its last transcript was in."""

    last_language: str | None


@runtime_checkable
class ChoosesVoice(Protocol):
    """A synthesizer whose voice and speed can change between chunks (Kokoro)."""

    voice: str
    speed: float


@runtime_checkable
class SpeaksLanguages(Protocol):
    """A synthesizer with a voice per language: load them ahead, pick one per chunk."""

    def prepare(self, languages: Sequence[str]) -> None: ...

    def use_language(self, language: str) -> None: ...


@runtime_checkable
class Phonemizes(Protocol):
    """A synthesizer that can say which IPA phonemes it speaks for a text (the mouth's
    shapes come from them; without them, from the audio's spectrum)."""

    def phonemes(self, text: str) -> str: ...


@runtime_checkable
class ReportsNotices(Protocol):
    """An engine with one-line problems for the user (a voice fell back to eSpeak)."""

    def take_notices(self) -> list[str]: ...


@runtime_checkable
class TunesTemperature(Protocol):
    """A language model whose sampling temperature a persona may set (None: default)."""

    def set_temperature(self, temperature: float | None) -> None: ...


@runtime_checkable
class BudgetsPrompt(Protocol):
    """A language model that knows how many prompt tokens fit (n_ctx minus a reply)."""

    def prompt_budget(self) -> int | None: ...


@runtime_checkable
class HasModelFile(Protocol):
    """An engine that runs a model file on this machine."""

    model_path: Path


@runtime_checkable
class DelaysOutput(Protocol):
    """An echo canceller that shifts its output by this many samples (16 kHz)."""

    output_delay_samples: int
