"""Keeps each persona's conversations and memories for a running pipeline (app and ``run``).

The pipeline's controller thread hands every ``TurnCommitted`` to ``observe``, which only
queues the write: one writer thread does all writing, so neither the audio callbacks nor
the GUI ever wait for the disk. Memory requests ("remember that...", "forget that...")
are applied by the same thread right after their exchange is saved.

Before each reply the pipeline asks ``context`` for the memories relevant to the user's
words; that is a small indexed read on the controller thread.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from app.core.events import PipelineEvent, TurnCommitted
from app.core.memory_intents import Forget, Recall, Remember, memory_note, parse
from app.core.metrics import TurnTimeline
from app.storage.database import Opened
from app.storage.history import (
    Database,
    Exchange,
    HistoryStore,
    SaveFailed,
    Timings,
    new_conversation_id,
)
from app.storage.memory import MemoryStore

if TYPE_CHECKING:
    from app.core.pipeline import VoicePipeline

log = logging.getLogger(__name__)

RESUME_EXCHANGES = 200
"""Most exchanges loaded back into a resumed conversation (the budget trims further)."""
RELEVANT_MEMORIES = 4
RECENT_MEMORIES = 3
RECALL_MEMORIES = 30
"""'What do you remember about me?' gets this many (most recent first)."""
TIMING_FIELDS = (
    "speech_start", "speech_end", "end_of_turn", "asr_final", "llm_first_token",
    "first_chunk_to_tts", "tts_first_audio", "first_sample_played", "playback_ended",
    "barge_in", "prompt_tokens", "reused_tokens", "prefix_reused", "voice_to_voice",
)


@dataclass(frozen=True)
class ConversationKey:
    """A conversation's key in the pipeline (``TurnCommitted.conversation_key``): whose
    conversation a turn is in."""

    persona_id: str
    conversation_id: str


class _Pipeline(Protocol):
    """What ``observe`` needs of a VoicePipeline."""

    @property
    def recorder(self) -> object: ...


def timings_of(turn: TurnTimeline | None) -> Timings:
    if turn is None:
        return {}
    data = turn.as_dict()
    out: Timings = {}
    for name in TIMING_FIELDS:
        value = data.get(name)
        if value is None or isinstance(value, int | float | bool):
            out[name] = value
    return out


class Keeper:
    def __init__(self, opened: Opened, notify: Callable[[str], None] | None = None) -> None:
        self.notify = notify or (lambda message: log.warning("%s", message))
        self.db = Database(opened.path, self.notify)
        self.history = HistoryStore(self.db)
        self.memories = MemoryStore(self.db)
        self._current: dict[str, str] = {}
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._writer = threading.Thread(target=self._write_loop, name="history-writer",
                                        daemon=True)
        self._writer.start()

    # ---- writer thread -------------------------------------------------------------------

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the writer thread, after every job submitted before it."""
        self._jobs.put(job)

    def flush(self) -> None:
        """Wait until every queued write is done (tests, shutdown)."""
        self._jobs.join()

    def close(self) -> None:
        self._jobs.put(None)
        self._writer.join(10)
        self.db.close()

    def _write_loop(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                job()
            except SaveFailed:
                pass  # reported once by the database; the conversation goes on in memory
            except Exception:
                log.exception("saving the conversation failed")
            finally:
                self._jobs.task_done()

    # ---- conversations (GUI thread, or the run's main thread) ------------------------------

    def resume(self, persona_id: str) -> tuple[ConversationKey, list[Exchange]]:
        """The persona's current conversation and its last exchanges. A database that
        fails to read (an I/O error after opening) gives one line and a fresh start."""
        try:
            conversation_id = (self._current.get(persona_id)
                               or self.history.current_id(persona_id))
            if conversation_id is None:
                return self.new_conversation(persona_id), []
            exchanges = self.history.exchanges(conversation_id, last=RESUME_EXCHANGES)
        except sqlite3.Error as exc:
            log.warning("cannot read saved conversations: %s", exc)
            self.notify(f"Saved conversations could not be read ({exc}); "
                        "starting a new conversation.")
            return self.new_conversation(persona_id), []
        self._current[persona_id] = conversation_id
        return ConversationKey(persona_id, conversation_id), exchanges

    def new_conversation(self, persona_id: str) -> ConversationKey:
        conversation_id = new_conversation_id()
        self._current[persona_id] = conversation_id
        self.submit(lambda: self.history.set_current(persona_id, conversation_id))
        return ConversationKey(persona_id, conversation_id)

    def reopen(self, persona_id: str, conversation_id: str) -> ConversationKey:
        """Make a past conversation the persona's current one (``resume`` then loads it)."""
        self.flush()  # its latest exchanges may still be in the queue
        self._current[persona_id] = conversation_id
        self.submit(lambda: self.history.set_current(persona_id, conversation_id))
        return ConversationKey(persona_id, conversation_id)

    def delete_conversation(self, persona_id: str, conversation_id: str) -> None:
        """Delete it; when the disk refuses, the user is told and nothing changes."""
        self.flush()
        try:
            self.history.delete_conversation(conversation_id)
        except SaveFailed as exc:
            self._refused("The conversation was not deleted", exc)
            return
        if self._current.get(persona_id) == conversation_id:
            self.new_conversation(persona_id)

    def forget_everything(self, persona_id: str) -> ConversationKey:
        """Every conversation and memory of the persona; returns its new, empty conversation
        (or, when the disk refuses, the current one: nothing was forgotten)."""
        self.flush()
        try:
            self.history.forget_persona(persona_id)
        except SaveFailed as exc:
            self._refused("Nothing was forgotten", exc)
            return self.resume(persona_id)[0]
        self._current.pop(persona_id, None)
        return self.new_conversation(persona_id)

    def _refused(self, what: str, exc: SaveFailed) -> None:
        """A user's own request failed: said every time (why, the first time, by the
        database's own once-only notice)."""
        log.info("%s: %s", what, exc)
        self.notify(f"{what}: the conversation database cannot be written right now.")

    # ---- pipeline hooks (telemetry thread) --------------------------------------------------

    def observer(self, pipeline: _Pipeline) -> Callable[[PipelineEvent], None]:
        def observe(event: PipelineEvent) -> None:
            if isinstance(event, TurnCommitted):
                self.record(pipeline, event)

        return observe

    def record(self, pipeline: _Pipeline, event: TurnCommitted) -> None:
        key = event.conversation_key
        if not isinstance(key, ConversationKey):
            return
        turns = getattr(pipeline.recorder, "turns", {})
        turn = turns.get(event.turn_id) if isinstance(turns, dict) else None
        timeline = turn if isinstance(turn, TurnTimeline) else None
        exchange = Exchange(
            event.user_text,
            event.heard_text.strip(),
            interrupted=bool(timeline and timeline.interrupted),
            committed_at=time.time(),
            timings=timings_of(timeline),
        )
        intent = parse(event.user_text)
        self.submit(lambda: self._save(key, exchange, intent))

    def _save(self, key: ConversationKey, exchange: Exchange,
              intent: Remember | Forget | Recall | None) -> None:
        # An exchange with nothing heard is merged into the next user message by the
        # Conversation; saving it too would repeat the user's words.
        if exchange.heard_text:
            self.history.add_exchange(key.persona_id, key.conversation_id, exchange)
        if isinstance(intent, Remember):
            self.memories.add(key.persona_id, intent.fact)
        elif isinstance(intent, Forget):
            forgotten = self.memories.forget(key.persona_id, intent.fact)
            log.info("forgot memory %s", forgotten.id if forgotten else "(none matched)")

    def context(self, key: object, user_text: str) -> str:
        """The memory note for the persona's next reply ('' when nothing is remembered)."""
        if not isinstance(key, ConversationKey):
            return ""
        persona = key.persona_id
        if isinstance(parse(user_text), Recall):
            facts = self.memories.recent(persona, RECALL_MEMORIES)
        else:
            relevant = self.memories.search(persona, user_text, RELEVANT_MEMORIES)
            seen = {m.id for m in relevant}
            recent = [m for m in self.memories.recent(persona, RECENT_MEMORIES + len(seen))
                      if m.id not in seen][:RECENT_MEMORIES]
            facts = relevant + recent
        return memory_note([m.text for m in facts])


def history_pairs(exchanges: list[Exchange]) -> list[tuple[str, str]]:
    """Exchanges as the (user, heard) pairs a Conversation holds."""
    return [(e.user_text, e.heard_text) for e in exchanges]


def attach(keeper: Keeper, pipeline: VoicePipeline, persona_id: str, system_prompt: str,
           new: bool = False) -> tuple[ConversationKey, list[Exchange]]:
    """Wire ``pipeline`` to ``keeper``: the persona's conversation resumed (or a new one),
    every commit saved, memories before each reply. Returns what was resumed."""
    exchanges: list[Exchange] = []
    if new:
        key = keeper.new_conversation(persona_id)
    else:
        key, exchanges = keeper.resume(persona_id)
    pipeline.load_conversation(system_prompt, history_pairs(exchanges), key)
    pipeline.add_observer(keeper.observer(pipeline))
    pipeline.set_context_provider(keeper.context)
    return key, exchanges
