"""``bench backchannels``' scoring: a reply's silence is found where it is, a cough is a
short burst, and the summary counts pauses, stops and answers per kind."""

from __future__ import annotations

import numpy as np

from bench.backchannels import _longest_silence, cough, summarise


def test_the_longest_silence_is_measured_inside_the_reply_only() -> None:
    rate = 16_000
    track = np.full(rate * 10, 0.2, np.float32)
    track[rate * 4:int(rate * 4.6)] = 0.0  # the reply paused 0.6 s for a voice at 3.8 s
    track[rate * 8:] = 0.0  # the reply ended at 8 s: silence after it is not a pause
    assert _longest_silence(track, rate, 3.8, 6.0) == 0.6
    assert _longest_silence(track, rate, 5.0, 10.0) == 0.0


def test_a_cough_is_a_quarter_second_burst_that_decays() -> None:
    burst = cough(1)
    assert 0.2 < burst.size / 16_000 < 0.3
    head, tail = burst[: burst.size // 4], burst[-burst.size // 4:]
    assert np.sqrt(np.mean(head ** 2)) > 5 * np.sqrt(np.mean(tail ** 2))


def test_the_summary_counts_each_kind_apart() -> None:
    def case(kind: str, paused: bool, stopped: bool, answered: list[str],
             stop_s: float | None = None, after: float | None = None) -> dict[str, object]:
        return {"kind": kind, "said": "x", "paused": paused, "stopped": stopped,
                "answered": answered, "stop_s": stop_s, "longest_silence_in_reply_s": 0.3,
                "after_reply_end_s": after}

    report = summarise([
        case("backchannel", True, False, []),
        case("backchannel", True, True, ["mh"]),
        case("backchannel", False, False, []),
        case("interruption", True, True, ["what time is it?"], 0.064),
        case("interruption", True, True, [], 0.096),
        case("after", False, False, ["yeah"], after=0.7),
        case("after", False, False, [], after=0.8),
    ])
    noises = report["backchannels_over_the_reply"]
    assert noises["paused"] == "2 of 3" and noises["stopped"] == "1 of 3"  # type: ignore[index]
    assert noises["take_over_rate"] == round(1 / 3, 3)  # type: ignore[index]
    interruptions = report["interruptions"]
    assert interruptions["stopped"] == "2 of 2" and interruptions["answered"] == "1 of 2"  # type: ignore[index]
    assert interruptions["stop_s"]["p50"] == 0.08  # type: ignore[index]
    assert report["backchannels_after_a_reply"]["take_over_rate"] == 0.5  # type: ignore[index]
