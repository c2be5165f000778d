"""Conversation history and prompt assembly.

The prompt is append-only: system prompt, then every committed exchange in order, then
the new user message. llama.cpp therefore finds the whole previous conversation already
in its KV cache and only evaluates the new words (warm time to first token).
Only what the user actually heard of a reply is recorded, so an interrupted answer does
not pretend to have been said.

When the history outgrows its budget the oldest exchanges go in a block (a quarter of the
budget at once), not one per turn: the prefix after the system prompt changes, so the
cache is re-evaluated once per block and every turn in between is warm again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.ports import ChatMessage

CHARS_PER_TOKEN = 3
"""A safe (low) estimate for English and most Latin-script text with Gemma/Qwen tokenizers."""
TURN_ROOM_CHARS = 1500
"""Kept free for the new user message and the memory note in front of it."""


def weight(text: str) -> int:
    """Characters, with each non-ASCII one counted as three: a Japanese or Chinese
    character is about a token on its own, so the budget holds in any script."""
    return len(text) + 2 * sum(1 for c in text if ord(c) > 127)


def history_budget_chars(prompt_budget_tokens: int, system_prompt: str) -> int:
    """History characters that fit the model's prompt budget (n_ctx minus the reply)."""
    room = prompt_budget_tokens * CHARS_PER_TOKEN - len(system_prompt) - TURN_ROOM_CHARS
    return max(1000, room)


@dataclass
class Conversation:
    system_prompt: str
    max_history_chars: int = 6000
    """Oldest exchanges are dropped past this (costs one cold prompt, then warm again)."""
    exchanges: list[tuple[str, str]] = field(default_factory=list)
    _unanswered: str = ""
    drop_fraction: float = 0.25
    """Share of ``max_history_chars`` freed at each drop, so drops are rare."""

    def __post_init__(self) -> None:
        self.exchanges = list(self.exchanges)  # a restored history is ours to trim
        self._fit()

    def system_messages(self) -> list[ChatMessage]:
        return [ChatMessage("system", self.system_prompt)]

    def user_text_for(self, transcript: str) -> str:
        """A user message that got no heard reply is merged into the next one, so roles
        keep alternating (Gemma's template rejects two user turns in a row)."""
        return f"{self._unanswered} {transcript}".strip() if self._unanswered else transcript

    def messages_for(self, user_text: str) -> list[ChatMessage]:
        messages = self.system_messages()
        for user, assistant in self.exchanges:
            messages.append(ChatMessage("user", user))
            messages.append(ChatMessage("assistant", assistant))
        messages.append(ChatMessage("user", user_text))
        return messages

    def commit(self, user_text: str, heard_text: str) -> None:
        heard = heard_text.strip()
        if not heard:
            self._unanswered = user_text
            return
        self._unanswered = ""
        self.exchanges.append((user_text, heard))
        self._fit()

    def said_first(self, heard_text: str) -> None:
        """What the companion said unasked (a timer that rang), as an exchange with no
        words of the user's, so roles keep alternating; a request still unanswered stays."""
        heard = heard_text.strip()
        if heard:
            self.exchanges.append(("", heard))
            self._fit()

    def _fit(self) -> None:
        """Past the budget, drop oldest exchanges until a block of room is free."""
        if self._history_chars() <= self.max_history_chars:
            return
        target = self.max_history_chars * (1.0 - self.drop_fraction)
        while self._history_chars() > target and len(self.exchanges) > 1:
            self.exchanges.pop(0)

    def _history_chars(self) -> int:
        return sum(weight(u) + weight(a) for u, a in self.exchanges)
