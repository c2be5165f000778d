"""The jobs the controller sends the stages besides a turn's own work: languages, warm-up,
background extraction, end of a reply, voice and reply options. Each is applied on the
thread that owns the engine it changes, between items, so no engine is written from
another thread."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.core.events import FloatAudio
from app.core.ports import ChatMessage
from app.core.tool_rounds import ToolRunner, ToolWait
from app.core.voice_gate import VoiceGate
from app.tools.spec import ToolSpec


@dataclass(frozen=True)
class SetLanguages:
    """The languages the user may speak and hear now (a persona's, main one first), for
    the recognizer (``set_languages``: pin one, or detect among several) and the voices
    (``prepare``: load them before the first reply needs them). Engines without those
    methods ignore it."""

    languages: tuple[str, ...]


@dataclass(frozen=True)
class SetVoiceGate:
    """For the recognizer: the enrolled voices and the companion's names, which decide
    whether a turn's words are for the companion (``voice_gate``)."""

    gate: VoiceGate


@dataclass(frozen=True)
class LearnVoice:
    """For the recognizer's voice check: learn the user's voice from their requests while
    nobody is enrolled (``voice_learning``), or stop learning."""

    on: bool


@dataclass(frozen=True)
class TranscribeAhead:
    """For the recognizer: the utterance so far at its first quiet frame, transcribed while
    the pause is still being counted (``transcript_ahead``); dropped when anything newer
    waits behind it."""

    audio: FloatAudio


@dataclass(frozen=True)
class WarmJob:
    """Evaluate the prefix every next prompt starts with (the persona, the history) now.

    ``after_reply``: sent when an exchange was committed, so the next turn evaluates only
    the user's words; dropped when a turn already waits behind it (that turn evaluates
    the same prefix), and a failure is only logged (the turn will try and say so)."""

    messages: list[ChatMessage]
    after_reply: bool = False


@dataclass(frozen=True)
class ExtractJob:
    """Background work for the idle app (the memory extraction): the LLM's whole output
    is handed to ``done`` (None when it was cancelled). Nothing is published, spoken or
    kept in the history; any user speech or turn cancels it within one token."""

    messages: list[ChatMessage]
    activity: int
    done: Callable[[str | None], None]
    max_chars: int = 600


@dataclass(frozen=True)
class EndOfReply:
    turn_id: int


@dataclass(frozen=True)
class SetVoice:
    """A persona's voice and speed, applied on the TTS thread between chunks (engines
    with ``voice``/``speed`` attributes, like Kokoro; others ignore it)."""

    voice: str
    speed: float


@dataclass(frozen=True)
class SetReplyOptions:
    """A persona's sampling temperature (None: the model's default) and reply length
    (None: no cap), applied on the LLM thread between replies."""

    temperature: float | None
    max_sentences: int | None
    tool_wait: ToolWait = field(default_factory=ToolWait)
    """What the persona says while a tool is slow."""


@dataclass(frozen=True)
class UseTools:
    """The tools the model may call from the next reply on (declared to a model that calls
    tools in its own format, on the LLM thread) and what runs a call; none: no tools."""

    specs: tuple[ToolSpec, ...]
    run: ToolRunner | None
