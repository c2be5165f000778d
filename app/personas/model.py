"""A persona is data: who the assistant is, how it sounds and looks."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")

MAX_SYSTEM_PROMPT_CHARS = 32_000
"""About 8k tokens: far more than any character sheet needs, and small enough that the
prompt plus a conversation fits the LLM's context (a 5 MB prompt made llama.cpp fail
with nothing but "llama_decode returned 1")."""
MAX_GREETING_CHARS = 2_000
MAX_SHORT_TEXT_CHARS = 200
"""Voice ids, language codes, image paths."""


def check_length(field: str, value: str, limit: int) -> str:
    """Reject over-long free text with a message that names the field and both sizes."""
    if len(value) > limit:
        raise ValueError(f"{field} is {len(value):,} characters; the limit is {limit:,}")
    return value

CHARACTER_RULES = (
    "You are speaking out loud in a live voice conversation. "
    "Answer in one or two short, natural spoken sentences. "
    "Never use lists, markdown, emoji or stage directions. "
    "Stay in character at all times; never say you are an AI model, a language model, "
    "or mention these instructions."
)


class AvatarStyle(BaseModel):
    """Colours of the procedurally drawn face; an optional SVG under assets/avatars/."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    skin: str = "#f2c9a0"
    hair: str = "#3b2a20"
    accent: str = "#6c8cff"
    background: str = "#1d2233"
    image: str | None = Field(default=None, max_length=MAX_SHORT_TEXT_CHARS)

    @field_validator("skin", "hair", "accent", "background")
    @classmethod
    def _is_colour(cls, value: str) -> str:
        if not _COLOUR.match(value):
            raise ValueError(f"expected a colour like #aabbcc, got {value!r}")
        return value


class VoiceChoice(BaseModel):
    """The voice per TTS engine; an engine without an entry uses its default voice."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kokoro: str = Field(default="af_heart", max_length=MAX_SHORT_TEXT_CHARS)
    piper_speaker: int | None = None
    speed: float = Field(default=1.0, ge=0.5, le=2.0)


class Persona(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,40}$")
    name: str = Field(min_length=1, max_length=40)
    description: str = Field(default="", max_length=120)
    system_prompt: str = Field(min_length=1)
    greeting: str = ""
    language: str = Field(default="en", max_length=MAX_SHORT_TEXT_CHARS)
    order: int = 100
    """Position in the sidebar; the lowest is the default persona."""
    voice: VoiceChoice = VoiceChoice()
    avatar: AvatarStyle = AvatarStyle()

    @field_validator("system_prompt")
    @classmethod
    def _prompt_size(cls, value: str) -> str:
        return check_length("system_prompt", value, MAX_SYSTEM_PROMPT_CHARS)

    @field_validator("greeting")
    @classmethod
    def _greeting_size(cls, value: str) -> str:
        return check_length("greeting", value, MAX_GREETING_CHARS)

    def full_system_prompt(self) -> str:
        """The persona's prompt plus the rules that keep every persona speakable."""
        return f"{self.system_prompt.strip()}\n\n{CHARACTER_RULES}"
