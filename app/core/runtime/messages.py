"""The controller's inbox: one union type of everything that may be posted to it.

The stages post the pipeline events they produce; the facade posts one message per public
call. Nothing else goes in, so a wrong message is a type error, not a run-time KeyError.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.core.events import PipelineEvent
from app.core.voice_gate import VoicePrint


@dataclass(frozen=True)
class SetMuted:
    muted: bool


@dataclass(frozen=True)
class Say:
    """Speak a fixed text like a reply (an empty text stops what is being said)."""

    text: str


@dataclass(frozen=True)
class Announce:
    """Something the companion says first (a timer that rang): spoken once nobody is
    talking and nothing plays, in order; while muted it is shown as a notice instead."""

    text: str


@dataclass(frozen=True)
class TypedRequest:
    """Words the user typed instead of saying them: a turn like a spoken one."""

    text: str


@dataclass(frozen=True)
class LoadConversation:
    """Switch to a conversation: the persona's prompt, its history and the caller's key."""

    prompt: str
    exchanges: tuple[tuple[str, str], ...] = ()
    key: object = None


@dataclass(frozen=True)
class UsePersona:
    """Everything a persona switch sets, in one message. The controller applies each part
    on the thread that owns it: the conversation, languages and late-answer rule on its
    own; languages to the recognizer and the voices; sampling and reply length to the LLM
    thread; the voice and its "Hmm," phrases to the TTS thread (voice first)."""

    languages: tuple[str, ...]
    """Base codes, main one first (the reply language is chosen from them)."""
    prompt: str | None = None
    """A fresh conversation with this system prompt; None keeps the conversation (the app
    loads the persona's saved one with ``LoadConversation``)."""
    voice: str | None = None
    """None keeps the voice (one chosen in the settings)."""
    speed: float = 1.0
    temperature: float | None = None
    """None: the model's default."""
    max_sentences: int | None = None
    """None: the pipeline's default cap."""
    acknowledgement_after_s: float = 1.2
    acknowledgement_phrases: tuple[str, ...] = ()
    """Said when an answer is late; none turns them off."""
    tool_waiting_lines: tuple[str, ...] = ()
    """Said when a tool the model called is that late; none: it waits in silence."""
    names: tuple[str, ...] = ()
    """What the companion is called: a voice that is not enrolled is heard when it says one."""


@dataclass(frozen=True)
class UseVoicePrints:
    """The enrolled voices (none: every voice is heard, as before any enrolment)."""

    prints: tuple[VoicePrint, ...]


@dataclass(frozen=True)
class Extract:
    """Background LLM work for an idle app (the memory extraction)."""

    key: object
    """The conversation it is for (skipped once another is shown); None: the one shown."""
    instruction: str
    done: Callable[[str | None], None]


@dataclass(frozen=True)
class Shutdown:
    """The controller's loop returns."""


ControlCommand = (SetMuted | Say | Announce | TypedRequest | LoadConversation | UsePersona
                  | UseVoicePrints | Extract | Shutdown)
ControlMessage = ControlCommand | PipelineEvent
