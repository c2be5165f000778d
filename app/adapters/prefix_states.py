"""Evaluated persona prefixes kept in memory, so switching back to a persona restores its
KV cache instead of evaluating its system prompt (and saved history) again.

One llama.cpp context holds one prompt's KV at a time: a switch from Yui to Kai and back
evaluated Yui's system prompt twice (about 1,000 tokens for the embedded model, whose
tokenizer spends three tokens on a Japanese character: 4.3 s on two cores). Each warmed
prefix of at least ``MIN_TOKENS`` is copied out of the context (llama.cpp's per-sequence
state: only the cells of sequence 0, not the whole context or the logits) when it cost
that much evaluation (a persona switch, a history dropped past its budget: not the few
tokens of a warm between turns), and the longest saved prefix of a prompt is copied back
when the cache holds less of it. Least recently used prefixes go first once the
copies pass ``budget_bytes``: the embedded model's KV is ~23 KB a token, a production
model's a few hundred.
"""

from __future__ import annotations

import ctypes
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

log = logging.getLogger(__name__)

MIN_TOKENS = 64
"""Shorter prefixes evaluate in a few tens of milliseconds: not worth the memory."""
DEFAULT_BUDGET_BYTES = 512 * 1024 * 1024
SEQUENCE = 0


class PrefixStates:
    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self.restored = 0
        """Prefixes restored instead of evaluated (diagnostics, tests)."""

    @property
    def held_bytes(self) -> int:
        return sum(len(data) for data in self._states.values())

    def __len__(self) -> int:
        return len(self._states)

    def save(self, llm: Any, tokens: Sequence[int]) -> None:
        """Copy the KV of ``tokens`` (now the context's whole cache) out of ``llm``."""
        key = tuple(int(t) for t in tokens)
        if len(key) < MIN_TOKENS or key in self._states:
            if key in self._states:
                self._states.move_to_end(key)
            return
        import llama_cpp

        ctx = llm._ctx.ctx
        size = int(llama_cpp.llama_state_seq_get_size(ctx, SEQUENCE))
        if size <= 0 or size > self.budget_bytes:
            return
        buffer = (ctypes.c_uint8 * size)()
        written = int(llama_cpp.llama_state_seq_get_data(ctx, buffer, size, SEQUENCE))
        if written <= 0:
            return
        self._states[key] = ctypes.string_at(buffer, written)
        while self.held_bytes > self.budget_bytes and len(self._states) > 1:
            self._states.popitem(last=False)

    def restore(self, llm: Any, tokens: Sequence[int], held: int = 0) -> int:
        """Put back the saved KV of the longest saved prefix of ``tokens`` into ``llm``'s
        context if it is longer than the ``held`` tokens its cache has of them already;
        returns how many of ``tokens`` the cache holds now (``held`` when none was put back;
        0 if llama.cpp refused, and the cache is empty then). The caller evaluates the rest."""
        wanted = tuple(int(t) for t in tokens)
        key = max((k for k in self._states if len(k) > held and wanted[:len(k)] == k),
                  key=len, default=None)
        if key is None:
            return held
        import llama_cpp

        data = self._states[key]
        llm.reset()
        llm._ctx.kv_cache_clear()
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if int(llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, buffer, len(data),
                                                  SEQUENCE)) != len(data):
            log.warning("restoring a saved prompt prefix failed; evaluating it instead")
            del self._states[key]
            llm.reset()
            llm._ctx.kv_cache_clear()
            return 0
        llm.input_ids[:len(key)] = key
        llm.n_tokens = len(key)
        self._states.move_to_end(key)
        self.restored += 1
        return len(key)
