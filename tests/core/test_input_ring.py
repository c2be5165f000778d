"""The microphone's ring: the callback only copies; the listener takes whole blocks, in
order, across the wrap, with the capture time of the last one."""

from __future__ import annotations

import threading
import tracemalloc

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from app.core.input_ring import InputRing


def test_blocks_come_out_in_order_with_the_last_capture_time() -> None:
    ring = InputRing(capacity_samples=10, max_blocks=4)
    assert ring.take() is None
    assert ring.write(np.arange(0, 4, dtype=np.float32), 1.0)
    assert ring.write(np.arange(4, 7, dtype=np.float32), 2.0)
    taken = ring.take()
    assert taken is not None
    samples, at = taken
    assert samples.tolist() == list(range(7)) and at == 2.0
    assert ring.take() is None and ring.empty()


def test_blocks_can_be_taken_one_by_one_with_their_own_times() -> None:
    ring = InputRing(capacity_samples=8, max_blocks=4)
    assert ring.write(np.zeros(2, np.float32), 0.0)
    assert ring.write(np.ones(3, np.float32), 0.5)
    taken = [(block.tolist(), at) for block, at in ring.take_blocks()]
    assert taken == [([0.0, 0.0], 0.0), ([1.0] * 3, 0.5)]
    assert ring.write(np.full(5, 2.0, np.float32), 1.0)  # across the wrap
    assert [(block.tolist(), at) for block, at in ring.take_blocks()] == [([2.0] * 5, 1.0)]
    assert ring.take_blocks() == []


def test_a_full_ring_drops_the_newest_block_and_counts_it() -> None:
    ring = InputRing(capacity_samples=8, max_blocks=8)
    assert ring.write(np.ones(6, np.float32), 1.0)
    assert not ring.write(np.full(3, 2.0, np.float32), 2.0)  # would overwrite unread audio
    assert ring.dropped == 1
    blocks = InputRing(capacity_samples=100, max_blocks=2)
    assert blocks.write(np.ones(1, np.float32), 1.0) and blocks.write(np.ones(1, np.float32), 2.0)
    assert not blocks.write(np.ones(1, np.float32), 3.0) and blocks.dropped == 1
    taken = ring.take()
    assert taken is not None and taken[0].tolist() == [1.0] * 6  # what was kept is intact


@given(st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=60),
       st.integers(min_value=1, max_value=5))
def test_nothing_is_lost_or_repeated_across_the_wrap(sizes: list[int], take_every: int) -> None:
    ring = InputRing(capacity_samples=16, max_blocks=64)
    counter = 0.0
    written: list[float] = []
    taken: list[float] = []
    for index, size in enumerate(sizes):
        block = np.arange(counter, counter + size, dtype=np.float32)
        if ring.write(block, float(index)):
            written.extend(block.tolist())
        counter += size
        if index % take_every == 0:
            got = ring.take()
            if got is not None:
                taken.extend(got[0].tolist())
    got = ring.take()
    if got is not None:
        taken.extend(got[0].tolist())
    assert taken == written


def test_write_allocates_no_audio_buffer() -> None:
    ring = InputRing(capacity_samples=512 * 64, max_blocks=64)
    block = np.ones(512, np.float32)
    ring.write(block, 0.0)  # warm up
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for i in range(32):
            ring.write(block, float(i))
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename")
                if stat.size_diff > 0)
    assert grown < 512 * 4  # less than one block's samples: views and floats at most


def test_a_producer_thread_and_a_consumer_thread_agree() -> None:
    ring = InputRing(capacity_samples=4096, max_blocks=256)
    total_blocks, size = 2000, 37
    taken: list[np.ndarray] = []
    done = threading.Event()

    def consume() -> None:
        while not done.is_set() or not ring.empty():
            got = ring.take()
            if got is not None:
                taken.append(got[0])

    consumer = threading.Thread(target=consume)
    consumer.start()
    written = 0
    for index in range(total_blocks):
        block = np.arange(index * size, (index + 1) * size, dtype=np.float32)
        while not ring.write(block, float(index)):
            pass  # the test waits; a real callback would drop it
        written += 1
    done.set()
    consumer.join(10)
    joined = np.concatenate(taken)
    assert written == total_blocks
    assert np.array_equal(joined, np.arange(total_blocks * size, dtype=np.float32))
