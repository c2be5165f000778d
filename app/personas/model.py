"""A persona is data: who the assistant is, how it sounds and looks."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from app.core import languages as core_languages
from app.core.acknowledgement import DEFAULT_AFTER_S as DEFAULT_ACK_AFTER_S
from app.core.acknowledgement import default_phrases as default_ack_phrases
from app.core.acknowledgement import default_tool_lines
from app.core.languages import SPEECH_LANGUAGES, base_language
from app.personas.avatar_layers import AvatarLayers
from app.personas.check_in import CheckInSettings
from app.personas.expression import ExpressionSettings
from app.personas.live2d_model import Live2DAvatar
from app.personas.rules import CHARACTER_RULES, prompt_rules
from app.personas.text import plain_text

__all__ = ["CHARACTER_RULES", "LANGUAGE_NAMES", "Persona"]

_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")

MAX_SYSTEM_PROMPT_CHARS = 32_000
"""About 8k tokens: far more than any character sheet needs, and small enough that the
prompt plus a conversation fits the LLM's context (a 5 MB prompt made llama.cpp fail
with nothing but "llama_decode returned 1")."""
MAX_GREETING_CHARS = 2_000
MAX_SHORT_TEXT_CHARS = 200
MAX_ACK_PHRASE_CHARS = 40
"""An acknowledgement is a breath ("Hmm,"), not a sentence: it delays the answer."""
"""Voice ids, language codes, image paths."""


def check_length(field: str, value: str, limit: int) -> str:
    """Reject over-long free text with a message that names the field and both sizes."""
    if len(value) > limit:
        raise ValueError(f"{field} is {len(value):,} characters; the limit is {limit:,}")
    return value


LANGUAGE_NAMES = core_languages.LANGUAGE_NAMES
"""Codes the persona editor offers; any other value is used as written (one table, in
``app.core.languages``)."""


def check_languages(language: str, languages: Sequence[object]) -> list[str]:
    """``languages`` as base codes, checked: the main language first, every other one a
    language the app can hear and speak (``SPEECH_LANGUAGES``), no repeats. Raises
    ValueError with one line naming the field."""
    main = base_language(language)
    codes: list[str] = []
    for value in languages:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"languages: expected language codes like \"ja\", got {value!r}")
        code = base_language(value)
        if code in codes:
            raise ValueError(f"languages: {value!r} is listed twice")
        codes.append(code)
    if not codes:
        return [main]
    if codes[0] != main:
        raise ValueError(f"languages: the first must be the persona's language {main!r} "
                         f"(got {codes[0]!r})")
    known = ", ".join(SPEECH_LANGUAGES)
    for code in codes[1:]:
        if code not in SPEECH_LANGUAGES:
            raise ValueError(f"languages: {code!r} is not one the app can hear and speak "
                             f"({known})")
    if len(codes) > 1 and main not in SPEECH_LANGUAGES:
        raise ValueError(f"languages: the persona's language {main!r} cannot be heard and "
                         f"spoken ({known}), so it cannot switch languages")
    return codes


def languages_for(language: str, previous: Sequence[str] = ()) -> list[str]:
    """The ``languages`` list after the main language changed to ``language``: a persona
    that spoke one language speaks the new one; one that switched languages keeps them,
    the new main first (the editor uses it, so picking a new language never leaves a list
    that no longer starts with it)."""
    main = base_language(language)
    if len(previous) <= 1 or main not in SPEECH_LANGUAGES:
        return [main]  # it spoke one language: now it speaks the new one
    rest = [base_language(code) for code in previous]
    return [main, *(c for c in dict.fromkeys(rest) if c != main and c in SPEECH_LANGUAGES)]


class AvatarStyle(BaseModel):
    """Colours of the procedurally drawn face, or a picture.

    ``image`` is a PNG or JPEG file name, relative to the folder of the persona's file
    (an imported character card's picture is copied there); when it loads, the sidebar
    and the stage show it instead of the drawn face, breathing, with a soft mouth at
    ``mouth_at`` (fractions of its width and height; default lower middle) while it speaks.
    ``layers`` (``[avatar.layers]``) is a layered-PNG avatar, shown instead of both.
    ``live2d`` (``[avatar.live2d]``) is a Live2D model, shown instead of all of them when
    the optional ``live2d-py`` package is installed and its licence accepted; otherwise
    the layers, picture or drawn face stand in (``app.ui.live2d_host``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    skin: str = "#f2c9a0"
    hair: str = "#3b2a20"
    accent: str = "#6c8cff"
    background: str = "#1d2233"
    image: str | None = Field(default=None, max_length=MAX_SHORT_TEXT_CHARS)
    mouth_at: tuple[float, float] | None = None
    layers: AvatarLayers | None = None
    live2d: Live2DAvatar | None = None

    @field_validator("mouth_at")
    @classmethod
    def _inside(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and not all(0.0 <= v <= 1.0 for v in value):
            raise ValueError(f"avatar.mouth_at: expected two fractions 0..1 like [0.5, 0.7], "
                             f"got {list(value)}")
        return value

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


MAX_CARD_EXTRA_CHARS = 1_000_000
"""Unknown character-card fields kept verbatim (lorebooks can be large)."""
MAX_CARD_TEXT_CHARS = 200_000
"""A card's own text fields, kept as written (the prompt made from them is capped)."""


class LlmSettings(BaseModel):
    """How the language model answers as this persona (None: the app's defaults).

    Both are honoured by the pipeline: the temperature goes to the model's sampler, the
    reply length caps the spoken sentences of each reply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    reply_sentences: int | None = Field(default=None, ge=1, le=20)


class AcknowledgementSettings(BaseModel):
    """The short phrase said when the answer is late to start (``[acknowledgement]``).

    ``after_s``: seconds after the user stops speaking with no answer audio before one
    plays. ``phrases``: what may be said, taken in turn (absent: the defaults for the
    persona's language; an empty list turns acknowledgements off). ``tool_lines``: what
    is said, in character, when a tool the model called takes that long too (absent: the
    defaults; empty: wait in silence)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    after_s: float = Field(default=DEFAULT_ACK_AFTER_S, ge=0.3, le=10.0)
    phrases: tuple[str, ...] | None = Field(default=None, max_length=8)
    tool_lines: tuple[str, ...] | None = Field(default=None, max_length=8)

    @field_validator("phrases", "tool_lines")
    @classmethod
    def _short_phrases(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        for phrase in value:
            if not phrase.strip():
                raise ValueError("acknowledgement: a phrase is empty")
            check_length("acknowledgement phrase", phrase, MAX_ACK_PHRASE_CHARS)
        return value

    def phrases_for(self, language: str) -> tuple[str, ...]:
        """The phrases to use for a persona speaking ``language``."""
        return default_ack_phrases(language) if self.phrases is None else self.phrases

    def tool_lines_for(self, language: str) -> tuple[str, ...]:
        """What a persona speaking ``language`` says while a slow tool runs."""
        return default_tool_lines(language) if self.tool_lines is None else self.tool_lines


class CardOrigin(BaseModel):
    """What an imported character card held beyond the persona's own fields, kept so the
    persona exports back to an equivalent card."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str = Field(default="chara_card_v2", max_length=MAX_SHORT_TEXT_CHARS)
    description: str = Field(default="", max_length=MAX_CARD_TEXT_CHARS)
    """The card's full description (the persona's own is one sidebar line)."""
    first_mes: str = Field(default="", max_length=MAX_CARD_TEXT_CHARS)
    """The card's first message as written (macros, any length); exported again while
    the persona's greeting is still the one made from it."""
    system_prompt: str = Field(default="", max_length=MAX_CARD_TEXT_CHARS)
    """The card's own system prompt as written (likewise)."""
    personality: str = Field(default="", max_length=MAX_CARD_TEXT_CHARS)
    scenario: str = Field(default="", max_length=MAX_CARD_TEXT_CHARS)
    mes_example: str = Field(default="", max_length=MAX_CARD_TEXT_CHARS)
    creator_notes: str = Field(default="", max_length=MAX_CARD_TEXT_CHARS)
    extra_json: str = Field(default="{}", max_length=MAX_CARD_EXTRA_CHARS)
    """The card's other ``data`` fields (tags, creator, extensions, lorebook...) as JSON."""

    @field_validator("extra_json")
    @classmethod
    def _is_object(cls, value: str) -> str:
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"card.extra_json is not JSON: {exc}") from exc
        if not isinstance(parsed, dict):
            raise ValueError("card.extra_json must hold a JSON object")
        return value


class Persona(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,40}$")
    name: str = Field(min_length=1, max_length=40)
    description: str = Field(default="", max_length=120)
    system_prompt: str = Field(min_length=1)
    greeting: str = ""
    language: str = Field(default="en", max_length=MAX_SHORT_TEXT_CHARS)
    """The main language (BCP-47): the one the persona greets and answers in."""
    languages: tuple[str, ...] = Field(
        default=(), max_length=len(SPEECH_LANGUAGES), validate_default=True
    )
    """Base codes of the languages the persona may hear and answer in, the main one
    first (default: just the main one); a list in TOML. Several mean auto mode: the
    recogniser detects the language and the persona answers in the one the user just
    spoke. A tuple, so a persona stays hashable like every other frozen model here."""
    order: int = 100
    """Position in the sidebar; the lowest is the default persona."""
    voice: VoiceChoice = VoiceChoice()
    avatar: AvatarStyle = AvatarStyle()
    llm: LlmSettings = LlmSettings()
    acknowledgement: AcknowledgementSettings = AcknowledgementSettings()
    expression: ExpressionSettings = ExpressionSettings()
    checkin: CheckInSettings = CheckInSettings()
    card: CardOrigin | None = None

    @field_validator("name", "description", mode="before")
    @classmethod
    def _shown_plain(cls, value: Any) -> Any:
        """Shown in the sidebar and printed by the CLI: no control characters or bidi
        overrides (a card's name could recolour a terminal or read backwards), one line."""
        return plain_text(value) if isinstance(value, str) else value

    @field_validator("system_prompt", "greeting", mode="before")
    @classmethod
    def _written_plain(cls, value: Any) -> Any:
        """The greeting is shown and spoken, the prompt shown in the editor and written to
        the persona's file: the same characters are dropped, line breaks kept."""
        return plain_text(value, multiline=True) if isinstance(value, str) else value

    @field_validator("system_prompt")
    @classmethod
    def _prompt_size(cls, value: str) -> str:
        return check_length("system_prompt", value, MAX_SYSTEM_PROMPT_CHARS)

    @field_validator("greeting")
    @classmethod
    def _greeting_size(cls, value: str) -> str:
        return check_length("greeting", value, MAX_GREETING_CHARS)

    @model_validator(mode="before")
    @classmethod
    def _languages_shape(cls, data: Any) -> Any:
        """A malformed ``languages`` gets one line naming it (not pydantic's list)."""
        if isinstance(data, dict) and "languages" in data:
            value = data["languages"]
            if isinstance(value, str):
                raise ValueError(f"languages: expected a list like [\"en\", \"ja\"], "
                                 f"got the text {value!r}")
            if not isinstance(value, (list, tuple)):
                raise ValueError(f"languages: expected a list like [\"en\", \"ja\"], "
                                 f"got {type(value).__name__}")
        return data

    @field_validator("languages")
    @classmethod
    def _languages_checked(
        cls, value: tuple[str, ...], info: ValidationInfo
    ) -> tuple[str, ...]:
        language = info.data.get("language")
        if not isinstance(language, str):
            return value  # the language itself was refused; that error is the one shown
        return tuple(check_languages(language, value))

    def spoken_languages(self) -> tuple[str, ...]:
        """Base codes of the languages the persona hears and answers in, main first."""
        return self.languages

    @property
    def main_language(self) -> str:
        """The base code of the main language ("ja" for "ja-JP")."""
        return base_language(self.language)

    @property
    def auto_language(self) -> bool:
        """True when the persona answers in whichever of its languages the user speaks."""
        return len(self.languages) > 1

    def full_system_prompt(self) -> str:
        """The persona's prompt plus the rules that keep every persona speakable, in the
        persona's language, with the language(s) to answer in."""
        rules = prompt_rules(self.spoken_languages(), tags=self.expression.tags)
        return f"{self.system_prompt.strip()}\n\n{rules}"
