"""Conversation history and prompt assembly.

The prompt is append-only: system prompt, then every committed exchange in order, then
the new user message. llama.cpp therefore finds the whole previous conversation already
in its KV cache and only evaluates the new words (warm time to first token).
Only what the user actually heard of a reply is recorded, so an interrupted answer does
not pretend to have been said.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.ports import ChatMessage


@dataclass
class Conversation:
    system_prompt: str
    max_history_chars: int = 6000
    """Oldest exchanges are dropped past this (costs one cold prompt, then warm again)."""
    exchanges: list[tuple[str, str]] = field(default_factory=list)
    _unanswered: str = ""

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
        while self._history_chars() > self.max_history_chars and len(self.exchanges) > 1:
            self.exchanges.pop(0)

    def _history_chars(self) -> int:
        return sum(len(u) + len(a) for u, a in self.exchanges)

    def clear(self) -> None:
        self.exchanges.clear()
        self._unanswered = ""
