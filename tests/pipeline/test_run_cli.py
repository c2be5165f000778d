"""`python -m app run` as a user runs it: real embedded models end to end, and bad input."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.adapters.file_audio import read_audio

REPO = Path(__file__).resolve().parents[2]


def hanasu(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m app`` with its own empty data and config folders: no conversation from
    another test is resumed into this one (a story told earlier changes what the model
    says and what counts as its echo), and none of this one's is left for the next."""
    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "HANASU_DATA_DIR": os.path.join(home, "data"),
            "HANASU_CONFIG_DIR": os.path.join(home, "config"),
        }
        return subprocess.run(
            [sys.executable, "-m", "app", *args],
            cwd=REPO,
            env=env,
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
    # one question in a quiet room: nothing dropped, nothing talked over
    assert data["dropped"] == [] and data["reply_pauses"] == [] and data["other_voice"] == 0
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
    # the user starts talking again 1.6 s after the question, while the reply is playing:
    # it starts 0.5-1.2 s after the question, and the tiny model's shortest story ("There's
    # a sea, a story about it...") lasts 2 s, so it is still playing however it goes
    gap = np.zeros(int(1.6 * rate), dtype=np.float32)
    combined = tmp_path / "barge.wav"
    soundfile.write(str(combined), np.concatenate([a, gap, b]), rate)
    out, timeline = tmp_path / "out.wav", tmp_path / "t.json"
    done = hanasu(
        "run", "--input", str(combined), "--output", str(out), "--timeline", str(timeline)
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(timeline.read_text())
    turns = data["turns"]
    # the reply paused at the user's voice (the barge-in rule's two voiced frames)
    user_again = (a.size + gap.size) / rate
    assert any(user_again - 0.2 <= p["voice_onset"] <= user_again + 0.6
               and p["paused"] - p["voice_onset"] <= 0.15 for p in data["reply_pauses"]), data
    # "Stop." may be judged a finished turn of its own (then it is cut short, unheard, by
    # "What time is it?" and merged into it); either way the last turn answers the question.
    assert 2 <= len(turns) <= 3, turns
    barge_at = turns[0]["barge_in"]
    assert barge_at is not None and user_again < barge_at < user_again + 1.0
    assert turns[0]["interrupted"]
    # each earlier turn was talked over: barged in, or reopened (nothing of its reply heard)
    assert all(t["barge_in"] is not None or (t["cancelled"] or "").startswith("reopened")
               for t in turns[:-1]), turns
    track, out_rate = soundfile.read(str(out), dtype="float32")
    # silent from shortly after the (last) barge-in until the answer to the question starts:
    # the pause comes within two voiced frames, and what was already in the speaker's ring
    # (40 ms, as on a real device) still plays
    last_barge = max(t["barge_in"] or t["end_of_turn"] for t in turns[:-1])
    second_start = turns[-1]["first_sample_played"]
    assert second_start is not None and second_start > last_barge
    quiet = track[int((last_barge + 0.15) * out_rate) : int(second_start * out_rate) - 1]
    # A reply to "Stop." that began between two VAD frames just as "What time is it?" began
    # pauses on the next frame (docs/audio.md): a frame and the speaker's 40 ms ring of its
    # first, quiet samples may sound (CI once heard a peak of 0.0103 there), no syllable
    # of any reply may: at most 80 ms of 10 ms blocks with sound in them.
    block = out_rate // 100
    blocks = quiet[: quiet.size - quiet.size % block].reshape(-1, block)
    sounding = int(np.count_nonzero(np.max(np.abs(blocks), axis=1) >= 0.01)) if blocks.size else 0
    assert sounding <= 8, f"{sounding * 10} ms of sound between the barge-in and the answer"
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


# ---- bad output paths fail before the run (issue 12, item 4) ----------------------------


def long_input(folder: Path, seconds: float = 20.0) -> Path:
    """Silence with a short 'question' tone: a fake-engine run of it takes ``seconds``."""
    path = folder / "long.wav"
    t = np.arange(int(seconds * 16_000)) / 16_000
    tone = np.where((t > 0.3) & (t < 1.3), 0.3 * np.sin(2 * np.pi * 180 * t), 0.0)
    soundfile.write(str(path), tone.astype(np.float32), 16_000)
    return path


@pytest.mark.parametrize(
    ("option", "make", "message"),
    [
        ("--output", lambda p: Path("/proc/out.wav"), "cannot be written"),
        ("--output", lambda p: p, "is a folder"),
        ("--output", lambda p: p / "no" / "such" / "o.wav", "does not exist"),
        ("--timeline", lambda p: Path("/proc/t.json"), "cannot be written"),
        ("--timeline", lambda p: p, "is a folder"),
        ("--timeline", lambda p: p / "missing" / "t.json", "does not exist"),
    ],
    ids=["output-proc", "output-folder", "output-no-parent", "timeline-proc",
         "timeline-folder", "timeline-no-parent"],
)
def test_unwritable_output_fails_before_running(
    tmp_path: Path,
    option: str,
    make,  # type: ignore[no-untyped-def]
    message: str,
) -> None:
    question = long_input(tmp_path)
    paths = {"--output": tmp_path / "o.wav", "--timeline": tmp_path / "t.json"}
    paths[option] = make(tmp_path)
    started = time.monotonic()
    done = hanasu(
        "run", "--input", str(question), "--output", str(paths["--output"]),
        "--timeline", str(paths["--timeline"]), "--fake-engines", timeout=60,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and message in lines[0], done.stderr
    assert elapsed < 15, f"ran the 20 s input first ({elapsed:.0f} s)"
    assert not (tmp_path / "o.wav").exists() and not (tmp_path / "t.json").exists()


# ---- Ctrl-C / SIGTERM write what was produced (item 7) -------------------------------


def start_run(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], Path, Path]:
    question = long_input(tmp_path, 30.0)
    out, timeline = tmp_path / "o.wav", tmp_path / "t.json"
    env = {**os.environ, "HANASU_LOG_DIR": str(tmp_path / "log")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "run", "--input", str(question), "--output", str(out),
         "--timeline", str(timeline), *extra],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    log = tmp_path / "log" / "hanasu.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and "as the microphone" in log.read_text(errors="replace"):
            break
        time.sleep(0.1)
    return proc, out, timeline


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"]
)
def test_signal_mid_run_writes_what_was_produced(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    proc, out, timeline = start_run(tmp_path, "--fake-engines")
    time.sleep(3.0)  # the tone ends at 1.3 s: the fake reply is playing or done by now
    proc.send_signal(sig)
    try:
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == code, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert f"interrupted ({sig.name})" in lines[0] and str(out) in lines[0], stderr
    track, rate = soundfile.read(str(out), dtype="float32")  # a valid WAV
    assert 2.0 < track.size / rate < 10.0  # what was played until the signal, not 30 s
    assert np.abs(track).max() > 0.01  # with the reply that was already spoken
    data = json.loads(timeline.read_text())
    assert len(data["turns"]) == 1


def test_signal_while_loading_says_nothing_was_written(tmp_path: Path) -> None:
    question = long_input(tmp_path, 5.0)
    out = tmp_path / "o.wav"
    log = tmp_path / "log" / "hanasu.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "run", "--input", str(question), "--output", str(out)],
        cwd=REPO, env={**os.environ, "HANASU_LOG_DIR": str(log.parent)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and "Loading speech recognizer" in log.read_text(errors="replace"):
            break  # the real engines are loading: several seconds more before playing
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    try:
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, stderr
    assert "interrupted (SIGTERM)" in stderr and "nothing written" in stderr, stderr
    assert "Traceback" not in stderr
    assert not out.exists()


# ---- problems found while loading are said, in one line (items 6 and 9) ----------------


def hanasu_env(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=REPO, env={**os.environ, **env}, capture_output=True, text=True, timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_voice_fallback_is_said_on_stderr(tmp_path: Path) -> None:
    """A corrupt Kokoro download: run still talks (eSpeak), and says why and what to run."""
    from tests.adapters.test_engine_errors import corrupt_kokoro

    data = tmp_path / "data"
    corrupt_kokoro(data)
    quiet = tmp_path / "quiet.wav"
    soundfile.write(str(quiet), np.zeros(16_000, dtype=np.float32), 16_000)
    done = hanasu_env(
        {"HANASU_DATA_DIR": str(data)},
        "run", "--input", str(quiet), "--output", str(tmp_path / "o.wav"), "--no-smart-turn",
    )
    assert done.returncode == 0, done.stderr
    [line] = [ln for ln in done.stderr.splitlines() if "Kokoro" in ln]
    assert line.startswith("hanasu: Kokoro voice could not load (")
    assert "speaking with eSpeak instead" in line and "hanasu models download tts" in line


@pytest.mark.slow
def test_persona_prompt_too_long_for_the_model_is_one_line(tmp_path: Path) -> None:
    from tests.adapters.test_engine_errors import long_prompt

    data = tmp_path / "data"
    (data / "personas").mkdir(parents=True)
    prompt = long_prompt(30_000)
    (data / "personas" / "talker.toml").write_text(
        f'id = "talker"\nname = "Talker"\nsystem_prompt = """\n{prompt}\n"""\n',
        encoding="utf-8",
    )
    quiet = tmp_path / "quiet.wav"
    soundfile.write(str(quiet), np.zeros(16_000, dtype=np.float32), 16_000)
    done = hanasu_env(
        {"HANASU_DATA_DIR": str(data)},
        "run", "--input", str(quiet), "--output", str(tmp_path / "o.wav"), "--persona", "talker",
    )
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert re.fullmatch(
        r"hanasu: persona 'talker' prompt is [\d,]+ tokens; the model's context holds 3,896 "
        r"with room for a reply: shorten the persona's system prompt",
        last,
    ), done.stderr
    assert "Traceback" not in done.stderr and "llama_decode" not in done.stderr


# ---- NaN/Inf input samples (item 5) ---------------------------------------------------


@pytest.mark.slow
def test_nan_samples_in_the_input_do_not_delay_the_reply(tmp_path: Path) -> None:
    """Before: Whisper heard ')))))...' for as long as it could and the reply came ~40 s
    late. The listener now zeroes non-finite samples before VAD/ASR and says so once."""
    question = tmp_path / "question.wav"
    espeak(question, "What is your favourite colour?", 0.5, 1.0)
    audio = read_audio(question)  # 16 kHz float
    audio[int(0.1 * 16_000) : int(0.3 * 16_000)] = np.nan
    audio[::997] = np.nan
    audio[-8_000:-6_400] = np.inf
    broken = tmp_path / "broken.wav"
    soundfile.write(str(broken), audio, 16_000, subtype="FLOAT")
    out, timeline = tmp_path / "o.wav", tmp_path / "t.json"
    done = hanasu(
        "run", "--input", str(broken), "--output", str(out), "--timeline", str(timeline)
    )
    assert done.returncode == 0, done.stderr
    [turn] = json.loads(timeline.read_text())["turns"]
    assert "colo" in turn["transcript"].lower(), turn["transcript"]
    assert 0 < turn["voice_to_voice"] < 3.0
    warnings = [ln for ln in done.stderr.splitlines() if "non-finite" in ln]
    assert len(warnings) == 1, done.stderr
    expected = int(np.count_nonzero(~np.isfinite(audio)))
    assert f"replaced {expected} non-finite" in warnings[0]
