"""The speaker's prepared buffer: the callback only copies, in order, across the wrap."""

from __future__ import annotations

import time

import numpy as np
import pytest

from app.core.output_ring import OutputFeeder, OutputRing


def test_samples_come_out_in_order_across_the_wrap_and_silence_fills_a_gap() -> None:
    ring = OutputRing(10, 16_000)
    out = np.empty(4, np.float32)
    source = np.arange(1, 100, dtype=np.float32)
    position = 0
    seen: list[float] = []
    for _ in range(20):
        position += ring.write(source[position:position + 5])
        ring.read_into(out)
        seen.extend(out.tolist())
    assert seen == source[:80].tolist()  # nothing lost or repeated at the wrap
    assert ring.starved == 0
    empty = OutputRing(8, 16_000)
    empty.write(np.ones(3, np.float32))
    empty.read_into(out)
    assert out.tolist() == [1.0, 1.0, 1.0, 0.0] and empty.starved == 1


def test_a_full_ring_takes_only_what_fits() -> None:
    ring = OutputRing(6, 16_000)
    assert ring.write(np.ones(10, np.float32)) == 6
    assert ring.write(np.ones(1, np.float32)) == 0


def test_the_feeder_keeps_the_device_fed_and_stamps_when_blocks_play() -> None:
    calls: list[tuple[int, float | None]] = []
    counter = iter(range(1_000_000))

    def pull(frames: int, plays_at: float | None) -> np.ndarray:
        calls.append((frames, plays_at))
        return np.array([next(counter) for _ in range(frames)], np.float32)

    feeder = OutputFeeder(pull, lambda: 10.0, sample_rate=100, block=2, lead_blocks=3)
    feeder.top_up()
    assert feeder.ring.buffered() == 6
    assert [at for _, at in calls] == [10.0, 10.02, 10.04]  # heard one block after another
    out = np.empty(4, np.float32)
    feeder.ring.read_into(out)
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0]
    feeder.start()
    time.sleep(0.1)
    feeder.stop()
    assert feeder.ring.buffered() >= 6  # topped up again on its own thread


def test_blocks_are_stamped_back_to_back_until_the_ring_runs_dry_then_by_the_reader() -> None:
    """The echo canceller's reference and the playback timeline rely on these stamps: a
    block that follows one still in the ring plays right after it, whatever the clock says
    when it is written; after a dry spell, the reader's word on when it plays counts."""
    stamps: list[float] = []
    now = [10.0]

    def pull(frames: int, plays_at: float | None) -> np.ndarray:
        assert plays_at is not None
        stamps.append(plays_at)
        return np.ones(frames, np.float32)

    feeder = OutputFeeder(pull, lambda: now[0], sample_rate=100, block=2, lead_blocks=3)
    feeder.top_up()
    out = np.empty(2, np.float32)
    feeder.ring.read_into(out, 10.0)
    now[0] = 10.013  # the feeder wakes late: the ring still holds 4 samples
    feeder.top_up()
    assert stamps == pytest.approx([10.0, 10.02, 10.04, 10.06])
    big = np.empty(9, np.float32)
    feeder.ring.read_into(big, 10.02)  # 6 samples and 3 of silence: it ran dry
    now[0] = 10.095
    feeder.top_up()
    assert stamps[4:] == pytest.approx([10.11, 10.13, 10.15])  # after the reader's silence


def test_an_idle_feeder_sleeps_until_there_is_something_to_play() -> None:
    import threading

    pulls: list[int] = []
    wake = threading.Event()
    work = {"busy": False}

    def pull(frames: int, plays_at: float | None) -> np.ndarray:
        pulls.append(frames)
        return np.zeros(frames, np.float32)

    feeder = OutputFeeder(pull, lambda: 0.0, sample_rate=1_000, block=10, lead_blocks=2,
                          has_work=lambda: work["busy"], wake=wake)
    feeder.start()
    time.sleep(0.2)
    idle_pulls = len(pulls)
    work["busy"] = True
    wake.set()
    time.sleep(0.2)
    feeder.stop()
    assert idle_pulls == 0
    assert len(pulls) >= 2


def test_an_idle_feeder_stays_asleep_while_the_device_drains_the_ring() -> None:
    """The device keeps calling while the app listens; an idle feeder must not refill the
    ring with silence (that was 100 wake-ups a second), and audio wakes it at once."""
    import threading

    pulls: list[int] = []
    wake = threading.Event()
    work = {"busy": False}
    done = threading.Event()

    def pull(frames: int, plays_at: float | None) -> np.ndarray:
        pulls.append(frames)
        return np.ones(frames, np.float32)

    feeder = OutputFeeder(pull, lambda: 0.0, sample_rate=1_000, block=10, lead_blocks=2,
                          has_work=lambda: work["busy"], wake=wake)
    out = np.zeros(10, np.float32)

    def device() -> None:  # a 10 ms callback draining the ring, like PortAudio's
        while not done.wait(0.01):
            feeder.ring.read_into(out)

    drainer = threading.Thread(target=device, daemon=True)
    drainer.start()
    feeder.start()
    try:
        time.sleep(0.8)  # longer than IDLE_WAIT_S: a timed-out wait must not top up
        idle_pulls = len(pulls)
        work["busy"] = True
        wake.set()
        deadline = time.monotonic() + 0.1
        while not pulls and time.monotonic() < deadline:
            time.sleep(0.002)
        woke_after = 0.1 - (deadline - time.monotonic())
    finally:
        feeder.stop()
        done.set()
        drainer.join(1)
    assert idle_pulls == 0
    assert pulls, "woken feeder never pulled"
    assert woke_after < 0.05
    assert feeder.idle_waits >= 2
