"""``hanasu bench conversation``: the session it builds, how it scores from the audio, and
one run end to end on the fake engines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.conversation import (
    CONVERSATION,
    Placed,
    Request,
    _answer_onset,
    build_track,
    conversation,
    report,
)

REPO = Path(__file__).resolve().parents[2]


def _track(*spans: tuple[float, float], seconds: float = 10.0, rate: int = 1000) -> np.ndarray:
    track = np.zeros(int(seconds * rate), np.float32)
    for start, end in spans:
        track[int(start * rate):int(end * rate)] = 0.5
    return track


def test_the_answer_is_the_first_sound_after_a_quiet_spell() -> None:
    quiet_then_answer = _track((2.0, 2.5), (3.4, 5.0))
    assert _answer_onset(quiet_then_answer, 1000, 3.0, 9.0) == pytest.approx(3.4)
    # a reply still sounding when the user stops is not the answer: the next onset is
    still_playing = _track((1.0, 3.2), (3.9, 5.0))
    assert _answer_onset(still_playing, 1000, 3.0, 9.0) == pytest.approx(3.9)
    assert _answer_onset(_track(), 1000, 3.0, 9.0) is None


def test_the_session_alternates_the_sets_and_says_some_requests_over_the_reply() -> None:
    scripted = conversation(len(CONVERSATION))
    assert len(scripted) >= 12
    assert [r.held_out for r in scripted[:4]] == [False, True, False, True]
    assert sum(r.over_reply for r in scripted) >= 3
    assert any(r.voice.startswith("recording:") for r in scripted)
    assert not {r.voice for r in scripted if r.held_out} & {r.voice for r in scripted
                                                            if not r.held_out}
    longer = conversation(18)
    assert len(longer) == 18 and longer[:14] == scripted


def test_the_track_places_each_request_after_the_last_with_its_gap() -> None:
    requests = [Request("How are you today?", "espeak:en-us:150", False),
                Request("Why do cats purr?", "espeak:en-gb:170", True, -6.0, over_reply=True),
                Request("And you always want to see it in the superlative degree.",
                        "recording:arctic_a0007.wav", True, 0.0, noisy=True)]
    track, placed = build_track(requests, gap_s=5.0, noise_db=-60.0)
    assert placed[1].start_s == pytest.approx(placed[0].end_s + 2.0)
    assert placed[2].start_s == pytest.approx(placed[1].end_s + 5.0)
    level = [float(np.sqrt(np.mean(np.square(
        track[int(p.start_s * 16000):int(p.end_s * 16000)])))) for p in placed]
    assert level[1] < level[0]  # -6 dB
    assert track.size / 16000 > placed[-1].end_s + 5.0


def test_report_compares_late_turns_with_the_first_and_keeps_the_sets_apart() -> None:
    rows: list[dict[str, object]] = []
    for index in range(1, 13):
        rows.append({"index": index, "set": "held-out" if index % 2 else "tuning",
                     "voice_to_voice": 0.5 if index == 1 else 0.6, "first_sound": 0.5,
                     "stopped_after_s": 0.08 if index == 4 else None, "talked_over_user": False,
                     "acknowledgement": "", "stages": {"asr": 0.1}, "playback_gaps": [0.2]})
    found = report(rows)
    assert found["drift_turns_8_12_vs_1"] == pytest.approx(1.2)
    assert found["voice_to_voice_s_held_out"]["n"] == 6.0  # type: ignore[index]
    assert found["gaps_over_150ms"] == 12
    assert found["talk_over_stop_s"]["p50"] == pytest.approx(0.08)  # type: ignore[index]


@pytest.mark.slow
def test_a_whole_conversation_on_the_fake_engines(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "app", "bench", "conversation", "--fake-engines",
         "--requests", "12", "--gap-s", "6", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(out.read_text())
    turns = found["turns"]
    assert len(turns) == 12
    replied = [t for t in turns if isinstance(t["voice_to_voice"], float)]
    # on a loaded machine a fake reply may still sound when a request said over it ends
    assert len(replied) >= 9, [t["said"] for t in turns if t not in replied]
    assert all(0.0 < t["voice_to_voice"] < 5.0 for t in replied)
    assert {t["set"] for t in replied} == {"tuning", "held-out"}
    assert found["summary"]["voice_to_voice_s_all"]["n"] == len(replied)


def test_placed_is_plain_data() -> None:
    item = Placed(CONVERSATION[0], 1.0, 2.0)
    assert item.end_s - item.start_s == 1.0


@pytest.mark.parametrize("language", ["ja", "zh"])
def test_a_japanese_or_mandarin_conversation_has_the_english_ones_shape(language: str) -> None:
    from bench.conversation_cjk import requests

    asked = requests(language, 14)
    english = conversation(14)
    assert [r.held_out for r in asked] == [r.held_out for r in english]
    assert sum(r.over_reply for r in asked) == sum(r.over_reply for r in english)
    tuning = {r.voice for r in asked if not r.held_out}
    held_out = {r.voice for r in asked if r.held_out}
    assert len(tuning) == len(held_out) == 1 and tuning != held_out  # another voice or pace
    assert len({r.text for r in asked}) == 14


@pytest.mark.slow
def test_a_japanese_request_is_spoken_at_the_benchs_level(tmp_path: Path) -> None:
    from bench.conversation import TARGET_RMS_DB, speak
    from bench.conversation_cjk import requests

    request = requests("ja", 2)[1]
    audio = speak(request, tmp_path)
    assert 0.8 < audio.size / 16_000 < 8.0
    level = 20 * np.log10(np.sqrt(np.mean(np.square(audio))))
    assert abs(level - (TARGET_RMS_DB + request.gain_db)) < 0.5
