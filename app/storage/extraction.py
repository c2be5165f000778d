"""Where the memory extraction's facts go: the persona's memories, unless already known.

Kept apart from ``app.core.memory_extraction`` (which knows nothing of storage) and from
the window, so the app and the tests wire the same thing.
"""

from __future__ import annotations

import logging

from app.core.memory_extraction import Store
from app.storage.keeper import ConversationKey, Keeper

log = logging.getLogger(__name__)


def fact_store(keeper: Keeper) -> Store:
    """A ``MemoryExtractor`` store: facts are written on the keeper's writer thread, after
    the exchange they came from, each skipped when the persona remembers it already."""

    def store(key: object, facts: list[str]) -> None:
        if not isinstance(key, ConversationKey):
            return

        def keep() -> None:
            added = [f for f in facts
                     if keeper.memories.add_new(key.persona_id, f) is not None]
            log.info("memory extraction stored %d new fact(s)", len(added))

        keeper.submit(keep)

    return store
