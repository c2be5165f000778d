"""The controller's inbox: one union type of everything that may be posted to it.

The stages post the pipeline events they produce; the facade posts one message per public
call. Nothing else goes in, so a wrong message is a type error, not a run-time KeyError.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.core.events import PipelineEvent


@dataclass(frozen=True)
class SetMuted:
    muted: bool


@dataclass(frozen=True)
class Say:
    """Speak a fixed text like a reply (an empty text stops what is being said)."""

    text: str


@dataclass(frozen=True)
class LoadConversation:
    """Switch to a conversation: the persona's prompt, its history and the caller's key."""

    prompt: str
    exchanges: tuple[tuple[str, str], ...] = ()
    key: object = None


@dataclass(frozen=True)
class UseLanguages:
    """The persona's languages, main one first (the reply language is chosen from them)."""

    languages: tuple[str, ...]


@dataclass(frozen=True)
class Extract:
    """Background LLM work for an idle app (the memory extraction)."""

    key: object
    instruction: str
    done: Callable[[str | None], None]


@dataclass(frozen=True)
class Shutdown:
    """The controller's loop returns."""


ControlCommand = SetMuted | Say | LoadConversation | UseLanguages | Extract | Shutdown
ControlMessage = ControlCommand | PipelineEvent
