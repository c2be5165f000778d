"""Which oldest messages a server's prompt leaves out after it said the context overflowed.

The server's tokenizer is out of reach, so the adapter learns the fit from refusals: each
refusal drops about half of the remaining exchanges, and the same ones stay dropped on later
turns, so the prompt stays append-only (and cached) after the cut instead of overflowing
again every turn.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from app.core.ports import ChatMessage

log = logging.getLogger(__name__)


def _first_kept(messages: Sequence[ChatMessage]) -> int:
    """Index of the first message that may be dropped (the system prompt always stays)."""
    return 1 if messages and messages[0].role == "system" else 0


class DroppedHistory:
    """The oldest messages left out of every prompt since the last overflow."""

    def __init__(self) -> None:
        self.dropped: tuple[ChatMessage, ...] = ()

    def apply(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """``messages`` less the dropped ones, while the conversation still starts with
        them (a new conversation forgets the cut)."""
        msgs = list(messages)
        first = _first_kept(msgs)
        n = len(self.dropped)
        if n and tuple(msgs[first : first + n]) == self.dropped and len(msgs) - first > n:
            return msgs[:first] + msgs[first + n :]
        self.dropped = ()
        return msgs

    def drop_more(self, messages: Sequence[ChatMessage]) -> bool:
        """Leave out about half of the exchanges still sent; False when none can go."""
        msgs = list(messages)
        start = _first_kept(msgs) + len(self.dropped)
        rest = len(msgs) - start - 1  # the last (user) message always stays
        if rest < 1:
            return False
        cut = max(2, rest // 2 // 2 * 2)  # whole exchanges: roles keep alternating
        while start + cut < len(msgs) - 1 and msgs[start + cut].role != "user":
            cut += 1
        cut = min(cut, rest)
        self.dropped = (*self.dropped, *msgs[start : start + cut])
        log.warning("prompt too long for the server: dropping the %d oldest messages", cut)
        return True
