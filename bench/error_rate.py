"""Levenshtein distance for the error rates the benches and tests report (WER over words,
CER over characters, the TTS round trip over syllable readings): one implementation."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")


def edit_distance(
    reference: Sequence[Item],
    hypothesis: Sequence[Item],
    same: Callable[[Item, Item], bool] = operator.eq,
) -> int:
    """Substitutions, insertions and deletions turning ``reference`` into ``hypothesis``;
    ``same`` decides when two items match (a Mandarin neutral tone matches any tone)."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        current = [i]
        for j, hyp in enumerate(hypothesis, 1):
            substitution = previous[j - 1] + (not same(ref, hyp))
            current.append(min(previous[j] + 1, current[j - 1] + 1, substitution))
        previous = current
    return previous[-1]
