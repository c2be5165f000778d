"""`python -m app run` as a user runs it: real embedded models end to end, and bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.adapters.file_audio import read_audio

REPO = Path(__file__).resolve().parents[2]


def hanasu(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def espeak(path: Path, text: str, pad_before: float, pad_after: float) -> None:
    raw = path.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "140", "-w", str(raw), text], check=True)
    subprocess.run(["sox", str(raw), str(path), "pad", str(pad_before), str(pad_after)], check=True)


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


@pytest.fixture(scope="module")
def recognizer():  # type: ignore[no-untyped-def]
    from app.adapters.whisper_asr import WhisperRecognizer

    return WhisperRecognizer()


@pytest.mark.slow
def test_question_gets_a_spoken_reply_after_it_ends(tmp_path: Path, recognizer) -> None:  # type: ignore[no-untyped-def]
    question = tmp_path / "question.wav"
    espeak(question, "What is your favourite colour?", 0.5, 1.0)
    out, timeline = tmp_path / "reply.wav", tmp_path / "timeline.json"
    done = hanasu(
        "run", "--input", str(question), "--output", str(out), "--timeline", str(timeline)
    )
    assert done.returncode == 0, done.stderr
    heard_in = read_audio(question)
    speech_end = np.flatnonzero(np.abs(heard_in) > 0.01)[-1] / 16_000
    track, rate = soundfile.read(str(out), dtype="float32")
    assert track.size / rate >= heard_in.size / 16_000 - 0.01  # at least as long as the input
    loud = np.flatnonzero(np.abs(track) > 0.01) / rate
    assert loud.size and loud[0] > speech_end  # nothing before the question ended
    reply = recognizer.transcribe(read_audio(out)[int(speech_end * 16_000) :])
    assert len(words(reply)) >= 2, f"reply did not transcribe to speech: {reply!r}"
    data = json.loads(timeline.read_text())
    [turn] = data["turns"]
    assert "colo" in turn["transcript"].lower()
    for key in (
        "speech_start",
        "speech_end",
        "end_of_turn",
        "asr_final",
        "llm_first_token",
        "first_chunk_to_tts",
        "tts_first_audio",
        "first_sample_played",
    ):
        assert isinstance(turn[key], float), key
    assert turn["prefix_reused"] is True  # the persona prefix was warmed before the turn
    assert 0 < turn["voice_to_voice"] < 3.0


@pytest.mark.slow
def test_user_talking_over_the_reply_stops_it_and_gets_a_second_reply(
    tmp_path: Path,
    recognizer,  # type: ignore[no-untyped-def]
) -> None:
    first, second = tmp_path / "a.wav", tmp_path / "b.wav"
    espeak(first, "Can you tell me a long story about the sea?", 0.5, 0.0)
    espeak(second, "Stop. What time is it?", 0.0, 1.0)
    a, rate = soundfile.read(str(first), dtype="float32")
    b, _ = soundfile.read(str(second), dtype="float32")
    # the user starts talking again 2.5 s after the question, while the reply is playing
    gap = np.zeros(int(2.5 * rate), dtype=np.float32)
    combined = tmp_path / "barge.wav"
    soundfile.write(str(combined), np.concatenate([a, gap, b]), rate)
    out, timeline = tmp_path / "out.wav", tmp_path / "t.json"
    done = hanasu(
        "run", "--input", str(combined), "--output", str(out), "--timeline", str(timeline)
    )
    assert done.returncode == 0, done.stderr
    turns = json.loads(timeline.read_text())["turns"]
    # "Stop." may be judged a finished turn of its own (then it is cut short, unheard, by
    # "What time is it?" and merged into it); either way the last turn answers the question.
    assert 2 <= len(turns) <= 3, turns
    barge_at = turns[0]["barge_in"]
    user_again = (a.size + gap.size) / rate
    assert barge_at is not None and user_again < barge_at < user_again + 1.0
    assert turns[0]["interrupted"]
    assert all(t["barge_in"] is not None for t in turns[:-1])
    track, out_rate = soundfile.read(str(out), dtype="float32")
    # silent from shortly after the (last) barge-in until the answer to the question starts
    last_barge = max(t["barge_in"] for t in turns[:-1])
    second_start = turns[-1]["first_sample_played"]
    assert second_start is not None and second_start > last_barge
    quiet = track[int((last_barge + 0.1) * out_rate) : int(second_start * out_rate) - 1]
    assert quiet.size == 0 or float(np.max(np.abs(quiet))) < 0.01
    assert "time" in turns[-1]["transcript"].lower()
    reply = recognizer.transcribe(read_audio(out)[int(second_start * 16_000) :])
    assert len(words(reply)) >= 2


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing.wav", "not found"),
        (
            lambda p: (p / "notes.wav").write_text("hello") and p / "notes.wav",
            "not a readable audio",
        ),
        (lambda p: p, "folder"),
    ],
    ids=["missing", "not-audio", "folder"],
)
def test_bad_input_gives_one_clear_line(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    bad = make(tmp_path)
    done = hanasu("run", "--input", str(bad), "--output", str(tmp_path / "o.wav"), "--fake-engines")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_empty_audio_file_is_rejected(tmp_path: Path) -> None:
    empty = tmp_path / "empty.wav"
    soundfile.write(str(empty), np.zeros(0, dtype=np.float32), 16_000)
    done = hanasu(
        "run", "--input", str(empty), "--output", str(tmp_path / "o.wav"), "--fake-engines"
    )
    assert done.returncode == 1 and "empty" in done.stderr and "Traceback" not in done.stderr


def test_missing_model_file_is_one_clear_line(tmp_path: Path) -> None:
    question = tmp_path / "q.wav"
    soundfile.write(str(question), np.zeros(16_000, dtype=np.float32), 16_000)
    done = hanasu(
        "run",
        "--input",
        str(question),
        "--output",
        str(tmp_path / "o.wav"),
        "--llm",
        str(tmp_path / "nope.gguf"),
    )
    assert done.returncode == 1
    assert "nope.gguf" in done.stderr and "Traceback" not in done.stderr


def test_corrupt_model_file_is_one_clear_line(tmp_path: Path) -> None:
    question = tmp_path / "q.wav"
    soundfile.write(str(question), np.zeros(16_000, dtype=np.float32), 16_000)
    corrupt = tmp_path / "broken.gguf"
    corrupt.write_bytes(b"not a gguf file at all" * 100)
    done = hanasu(
        "run", "--input", str(question), "--output", str(tmp_path / "o.wav"), "--llm", str(corrupt)
    )
    assert done.returncode == 1
    assert "broken.gguf" in done.stderr and "Traceback" not in done.stderr


def test_any_sample_rate_and_channels_are_accepted(tmp_path: Path) -> None:
    stereo = tmp_path / "stereo44k.wav"
    t = np.arange(int(2.5 * 44_100)) / 44_100
    tone = np.where((t > 0.5) & (t < 1.5), 0.3 * np.sin(2 * np.pi * 180 * t), 0.0)
    soundfile.write(str(stereo), np.stack([tone, tone], axis=1).astype(np.float32), 44_100)
    out = tmp_path / "o.wav"
    done = hanasu("run", "--input", str(stereo), "--output", str(out), "--fake-engines")
    assert done.returncode == 0, done.stderr
    track, rate = soundfile.read(str(out), dtype="float32")
    assert track.size / rate >= 2.5 - 0.01
    assert np.flatnonzero(np.abs(track) > 0.01)[0] / rate > 1.5
