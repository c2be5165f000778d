"""What a pipeline is built from: the engines, its settings and the one clock."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.core.endpointing import EndpointConfig
from app.core.gate_config import GateConfig
from app.core.languages import base_language, language_name
from app.core.ports import (
    LanguageModel,
    SpeakerEncoder,
    SpeechRecognizer,
    SpeechSynthesizer,
    VoiceActivity,
)


class MonotonicClock:
    """Seconds since ``start()``, the zero of the run's timeline."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()

    def start(self) -> None:
        self._t0 = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._t0


@dataclass(frozen=True)
class Engines:
    vad: VoiceActivity
    asr: SpeechRecognizer
    llm: LanguageModel
    tts: SpeechSynthesizer
    notices: tuple[str, ...] = ()
    """One-line problems found while loading that the user should see (a voice that fell
    back to eSpeak, ...): shown by ``hanasu run`` on stderr and in the desktop window."""
    llm_languages: tuple[str, ...] | None = None
    """The languages the language model can hold a conversation in (None: any we speak);
    the embedded SmolLM2-135M speaks English only, so a Japanese persona on it gets a
    notice pointing to a model that speaks Japanese (``llm_language_notice``)."""
    speaker: SpeakerEncoder | None = None
    """Voice prints, to tell enrolled voices from others (None: every voice is heard)."""


def llm_language_notice(engines: Engines, persona_name: str,
                        languages: Sequence[str]) -> str | None:
    """One line for a persona whose languages the language model cannot speak, or None."""
    spoken = engines.llm_languages
    if spoken is None:
        return None
    missing = [code for code in languages if base_language(code) not in spoken]
    if not missing:
        return None
    names = " and ".join(language_name(code) for code in missing)
    return (f"{persona_name} speaks {names}, but the built-in language model answers well "
            f"only in English: get Gemma 4 in Models… (or use a language model server in "
            f"Settings) for a real conversation in {names}")


@dataclass(frozen=True)
class PipelineConfig:
    endpoint: EndpointConfig = field(default_factory=EndpointConfig)
    speculative: bool = True
    barge_in: bool = True
    max_reply_sentences: int | None = 4
    """Spoken replies stop after this many sentences (small models ramble for a minute);
    the user can always ask it to go on."""
    mic_ring_blocks: int = 512
    """Capture blocks the microphone may run ahead of the listener before blocks are dropped."""
    timelines_kept: int | None = None
    """Turn timelines the recorder keeps (None: all; the desktop app keeps the last 64)."""
    words_end_turns: bool = True
    """The speculative transcript at the first pause takes part in the end-of-turn call
    (off: the audio model and the silence alone; ``bench turns`` compares)."""
    transcribe_ahead: bool = True
    """The recognizer and the audio model start on the utterance at its first quiet frame,
    before the pause (``transcript_ahead``; off: both at the pause, as before)."""
    warm_history: bool = True
    """Each committed exchange is evaluated into the model's cache before the next turn
    (off: the next turn evaluates it; ``bench conversation --no-warm-history``)."""
    first_audio_priority: bool = True
    """The LLM pauses while the reply's first chunk is synthesized (off: both at once)."""
    gate: GateConfig = field(default_factory=GateConfig)
    """Where replies are cut into chunks for the voice (``bench conversation
    --first-chunk-words 0`` measures the first-chunk cut)."""
