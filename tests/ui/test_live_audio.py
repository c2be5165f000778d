"""Real audio end to end: the real app (embedded models) under X, a spoken question played
into a virtual microphone, the spoken reply recorded from a virtual speaker.

PulseAudio runs privately with null sinks (``tests/support/pulse.sh``): ``paplay -d
micfeed`` is what the app's microphone (``vmic``) hears, and ``spk.monitor`` is what it
plays. With null sinks the microphone never hears the speaker. Needs pulseaudio, pactl,
parec, paplay, espeak-ng, sox, ImageMagick ``import`` and a DISPLAY (or Xvfb).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
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
from tests.support.system import require_tools

QUESTION = "What is your favourite colour?"
SCREENSHOT = ROOT / "tests" / "ui" / "screenshots" / "live-app.png"

ENGINES_TIMEOUT = 180.0
"""Real models on a loaded 2-core machine: usually ~10-30 s."""
DEVICES_TIMEOUT = 30.0
TRANSCRIPT_TIMEOUT = 90.0
REPLY_TIMEOUT = 180.0
"""From the transcript to the end of playback (the embedded LLM and TTS on 2 cores)."""
EXIT_TIMEOUT = 10.0
QUIET = 0.01
"""RMS of a 20 ms frame above this counts as sound (null sinks are exactly silent)."""


def _question_wav(folder: Path) -> Path:
    spoken = folder / "q-raw.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "140", "-w", str(spoken), QUESTION],
                   check=True, capture_output=True, timeout=60)
    padded = folder / "q.wav"
    subprocess.run(["sox", str(spoken), str(padded), "pad", "0.3", "0.5"],
                   check=True, capture_output=True, timeout=60)
    return padded


def _screenshot(display: str) -> None:
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["import", "-window", "root", str(SCREENSHOT)],
                   env={**os.environ, "DISPLAY": display}, capture_output=True, timeout=60,
                   check=False)


@pytest.mark.slow
@pytest.mark.gui
def test_spoken_question_gets_a_spoken_reply(tmp_path: Path) -> None:
    needed = ["pulseaudio", "pactl", "parec", "paplay", "espeak-ng", "sox", "import"]
    if not os.environ.get("DISPLAY"):
        needed.append("Xvfb")
    require_tools(*needed)
    question = _question_wav(tmp_path)
    log_path = tmp_path / "app-stderr.log"
    pulse, xvfb = Pulse(), Xvfb()
    app: subprocess.Popen[bytes] | None = None
    recording: SpeakerRecording | None = None
    timings: dict[str, float] = {}

    def log_text() -> str:
        return read_text(log_path)

    def alive_or_fail() -> None:
        if app is not None and app.poll() is not None:
            pytest.fail(f"the app exited early ({app.returncode}):\n{log_text()[-4000:]}")

    def logged(pattern: str) -> bool:
        alive_or_fail()
        return re.search(pattern, log_text()) is not None

    try:
        pulse.start()
        display = xvfb.start()
        env = {
            **pulse.child_env(),
            "DISPLAY": display,
            "QT_QPA_PLATFORM": "xcb",
            "HANASU_CONFIG_DIR": str(tmp_path / "config"),
            "HANASU_DATA_DIR": str(tmp_path / "data"),
            "HANASU_LOG_DIR": str(tmp_path / "log"),
        }
        # tests/ui/conftest.py sets these for the in-process UI tests; not for this app.
        for name in ("HANASU_NO_AUDIO", "HANASU_EXIT_WHEN_READY"):
            env.pop(name, None)
        started = time.monotonic()
        with log_path.open("wb") as stderr:
            app = subprocess.Popen([sys.executable, "-m", "app", "-v"], cwd=ROOT, env=env,
                                   stdout=subprocess.DEVNULL, stderr=stderr)
        def engines_loaded() -> bool:
            failed = re.search(r"engines failed: (.*)", log_text())
            if failed:  # fail now, with the app's own one-line reason, instead of waiting
                pytest.fail(f"the app could not load its engines: {failed.group(1)}",
                            pytrace=False)
            return logged(r"Engines ready in")

        assert wait_until(engines_loaded, ENGINES_TIMEOUT, 0.5), \
            f"engines not ready after {ENGINES_TIMEOUT:.0f} s:\n{log_text()[-4000:]}"
        timings["engines"] = time.monotonic() - started
        # DeviceAudio logs "audio devices: Microphone: ...; speaker: ..." once both run.
        assert wait_until(lambda: logged(r"audio devices: Microphone"), DEVICES_TIMEOUT), \
            f"audio devices did not open:\n{log_text()[-4000:]}"
        timings["devices"] = time.monotonic() - started

        recording = SpeakerRecording(tmp_path / "speaker.raw", pulse.child_env())
        rec = recording
        assert wait_until(lambda: rec.samples().size >= RATE, 30), "parec records nothing"
        time.sleep(1.5)  # a moment of app idling on record: it must stay silent
        before = rec.samples().size
        unprompted = loud_seconds(rec.samples()[:before], QUIET)

        subprocess.run(["paplay", "-d", "micfeed", str(question)], env=pulse.child_env(),
                       check=True, capture_output=True, timeout=60)
        asked = time.monotonic()
        assert wait_until(lambda: logged(r"user said"), TRANSCRIPT_TIMEOUT), \
            f"no transcript after {TRANSCRIPT_TIMEOUT:.0f} s:\n{log_text()[-4000:]}"
        timings["transcript"] = time.monotonic() - asked

        def reply_audio() -> bool:
            alive_or_fail()
            return loud_seconds(rec.samples()[before:], QUIET) > 0.2

        assert wait_until(reply_audio, REPLY_TIMEOUT), \
            f"nothing was played after {REPLY_TIMEOUT:.0f} s:\n{log_text()[-4000:]}"
        timings["first_audio"] = time.monotonic() - asked
        time.sleep(1.0)
        _screenshot(display)  # while the reply plays
        # "user heard" is logged when playback of the turn ended; then let the tail of
        # the reply reach the recording (1.5 s of silence at its end).
        assert wait_until(lambda: logged(r"user heard"), REPLY_TIMEOUT, 0.5), \
            f"the reply did not finish playing:\n{log_text()[-4000:]}"
        wait_until(lambda: trailing_silence_seconds(rec.samples()[before:], QUIET) >= 1.5, 15)
        timings["reply_done"] = time.monotonic() - asked
        recording.stop()
        reply = recording.write_wav(tmp_path / "speaker.wav")

        terminated = time.monotonic()
        code = stop_process(app, signal.SIGTERM, timeout=EXIT_TIMEOUT)
        exit_seconds = time.monotonic() - terminated
    finally:
        if recording is not None:
            recording.stop()
        if app is not None:
            stop_process(app, signal.SIGKILL, timeout=10)
        xvfb.stop()
        pulse.stop()

    text = log_text()
    print(f"timings (s): {timings}; exit after SIGTERM {exit_seconds:.1f} s, code {code}")
    said = re.findall(r"user said '(.*)'", text) + re.findall(r'user said "(.*)"', text)
    assert any("colo" in s.lower() for s in said), f"transcripts: {said}"
    assert unprompted == 0.0, f"the app made {unprompted:.2f} s of sound before the question"

    from app.adapters.file_audio import read_audio
    from app.adapters.whisper_asr import WhisperRecognizer

    heard = WhisperRecognizer().transcribe(read_audio(reply))
    print(f"question transcript: {said}; reply as recorded: {heard!r}")
    assert len(heard.split()) >= 2, f"recorded reply: {heard!r}"
    assert "Traceback" not in text, text[-4000:]
    assert exit_seconds < EXIT_TIMEOUT and code == 0, \
        f"exit code {code} after SIGTERM ({exit_seconds:.1f} s):\n{text[-3000:]}"
