"""History past its budget is dropped in blocks, so the cached prefix survives most turns."""

from __future__ import annotations

import itertools

from app.core.conversation import Conversation, history_budget_chars


def _prefix_changes(conversation: Conversation, turns: int) -> list[int]:
    """Turns at which the prompt no longer starts with the previous turn's prompt."""
    changes = []
    previous = None
    for i in range(turns):
        user = f"question number {i:03d} " + "x" * 40
        prompt = conversation.messages_for(user)
        if previous is not None and prompt[: len(previous)] != previous:
            changes.append(i)
        conversation.commit(user, f"answer number {i:03d} " + "y" * 40)
        previous = prompt  # what the model has cached when the next turn comes
    return changes


def test_prefix_is_identical_across_turns_until_a_block_drop() -> None:
    conversation = Conversation("You are Hana.", max_history_chars=2000)
    changes = _prefix_changes(conversation, 60)
    # each exchange is ~120 chars: a 2000-char budget fills in ~16 turns, then a quarter
    # (500 chars, ~4 exchanges) goes at once: a re-evaluation every ~4-5 turns, not every turn
    assert changes, "the budget was never reached"
    gaps = [b - a for a, b in itertools.pairwise(changes)]
    assert min(gaps) >= 4
    assert len(changes) <= 60 // 4
    assert sum(len(u) + len(a) for u, a in conversation.exchanges) <= 2000


def test_one_exchange_per_turn_dropping_would_change_the_prefix_every_turn() -> None:
    """The same run with drop_fraction 0 (the old behaviour) changes the prefix each turn:
    this is what the block drop saves."""
    conversation = Conversation("You are Hana.", max_history_chars=2000, drop_fraction=0.0)
    changes = _prefix_changes(conversation, 60)
    assert len(changes) > 30


def test_a_restored_history_is_trimmed_to_the_budget() -> None:
    exchanges = [(f"q{i}" * 20, f"a{i}" * 20) for i in range(100)]
    conversation = Conversation("sys", 1000, exchanges)
    assert sum(len(u) + len(a) for u, a in conversation.exchanges) <= 1000
    assert conversation.exchanges[-1] == exchanges[-1]
    assert exchanges[0] in [(f"q{0}" * 20, f"a{0}" * 20)]  # the caller's list is untouched
    assert len(exchanges) == 100


def test_budget_follows_the_context_size() -> None:
    small = history_budget_chars(4096 - 200, "x" * 1000)
    large = history_budget_chars(8192 - 200, "x" * 1000)
    assert 8000 < small < 12000 and large > small
    assert history_budget_chars(100, "x" * 5000) == 1000


def test_non_latin_text_counts_towards_the_budget_as_tokens() -> None:
    japanese = [("こんにちは、元気ですか" * 5, "はい、元気です" * 5) for _ in range(40)]
    english = [("hello, how are you" * 5, "fine thanks" * 5) for _ in range(40)]
    assert len(Conversation("sys", 3000, japanese).exchanges) < \
        len(Conversation("sys", 3000, english).exchanges)
