"""The one place that owns the history: what each turn asks and what of each reply was heard.

A turn's prompt is built here (its words joined to an unanswered request, the memories and
the reply-language note added), and what the user heard is committed here once its
playback ends, into the conversation the turn started in: a persona switch in between
changes where new turns go, never where an answered one lands, so nothing is retracted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.core.conversation import Conversation
from app.core.events import PipelineEvent, TurnCancelled, TurnCommitted
from app.core.languages import reply_language_note
from app.core.memory_intents import with_memories
from app.core.ports import ChatMessage
from app.core.turn_commands import REOPENED

log = logging.getLogger(__name__)

ContextProvider = Callable[[object, str], str]
"""``(conversation key, user text) -> note`` put before the user's words (memories)."""
ReplyScript = Callable[[int, str, str], str | None]
"""``(turn id, user text, reply language) -> reply`` for requests answered without the
model (built-in tools), or None to ask the model."""

KEPT_TURNS = 256
"""How many recent turns' conversation keys and heard languages are remembered."""


class TurnHistory:
    def __init__(self, conversation: Conversation, key: object = None) -> None:
        self.conversation = conversation
        """Where new turns are answered from and committed to."""
        self.key = key
        """Whose conversation this is (the app's persona and conversation id)."""
        self.context: ContextProvider | None = None
        self.script: ReplyScript | None = None
        self.languages: tuple[str, ...] = ("en",)
        """The persona's languages, main one first."""
        self._awaiting: dict[int, tuple[str, Conversation]] = {}
        """Confirmed turns whose playback has not ended: their words and their conversation."""
        self._turn_keys: dict[int, object] = {}
        self._heard: dict[int, str] = {}
        """Language heard per recent turn."""

    def switch(self, conversation: Conversation, key: object) -> None:
        self.conversation, self.key = conversation, key

    # ---- bookkeeping per turn -------------------------------------------------------

    def turn_started(self, turn_id: int) -> None:
        self._turn_keys[turn_id] = self.key
        self._turn_keys.pop(turn_id - KEPT_TURNS, None)

    def language_heard(self, turn_id: int, language: str) -> None:
        self._heard[turn_id] = language
        self._heard.pop(turn_id - KEPT_TURNS, None)

    def key_of(self, turn_id: int) -> object:
        """The conversation key the turn started under."""
        return self._turn_keys.get(turn_id, self.key)

    def reply_language(self, turn_id: int) -> str:
        """The language to answer turn ``turn_id`` in: the one heard when the persona
        speaks it, else the persona's main language."""
        heard = self._heard.get(turn_id)
        return heard if heard in self.languages else self.languages[0]

    # ---- prompts --------------------------------------------------------------------

    def request(self, text: str) -> tuple[str, list[ChatMessage]]:
        """The user's words as sent (joined to an unanswered request) and the history."""
        user_text = self.conversation.user_text_for(text)
        return user_text, self.conversation.messages_for(user_text)

    def prompt(self, turn_id: int, messages: list[ChatMessage]) -> tuple[list[ChatMessage], str]:
        """The request with the memories and (several languages) the reply-language note,
        and the language to answer in."""
        language = self.reply_language(turn_id)
        messages = self._with_context(turn_id, messages)
        if len(self.languages) > 1:  # auto mode: say which language to answer in, per turn
            messages = with_memories(messages, reply_language_note(language))
        return messages, language

    def scripted_reply(self, turn_id: int, messages: list[ChatMessage],
                       language: str) -> str | None:
        if self.script is None or not messages:
            return None
        try:
            return self.script(turn_id, messages[-1].content, language)
        except Exception:  # a tool that broke: the model answers instead
            log.exception("reply script failed")
            return None

    def _with_context(self, turn_id: int, messages: list[ChatMessage]) -> list[ChatMessage]:
        if self.context is None or not messages:
            return messages
        try:
            note = self.context(self.key_of(turn_id), messages[-1].content)
        except Exception:  # memories are a help, never a reason to miss a reply
            log.exception("context provider failed")
            return messages
        return with_memories(messages, note)

    # ---- commits --------------------------------------------------------------------

    @property
    def awaiting_commit(self) -> bool:
        """A confirmed turn's playback has not ended yet."""
        return bool(self._awaiting)

    def expect(self, turn_id: int, user_text: str) -> None:
        """A confirmed turn's words, to commit with what is heard of its reply."""
        self._awaiting[turn_id] = (user_text, self.conversation)

    def forget(self, turn_id: int) -> None:
        self._awaiting.pop(turn_id, None)

    def commit(self, turn_id: int, heard_text: str, unheard: bool,
               at: float) -> PipelineEvent | None:
        """Playback of the turn's reply ended: commit what was heard (nothing when the
        reply was cut before it was an answer, and the request stays open)."""
        waiting = self._awaiting.pop(turn_id, None)
        if waiting is None:
            return None
        user_text, conversation = waiting
        heard = "" if unheard else heard_text
        conversation.commit(user_text, heard)
        if unheard:
            return TurnCancelled(turn_id, at, REOPENED)
        return TurnCommitted(turn_id, user_text, heard, self.key_of(turn_id))
