"""The real desktop app (embedded recognizer and voices, under X, PulseAudio null sinks)
holds a spoken conversation in Japanese and in Mandarin: a question spoken by Kokoro is
played into the virtual microphone, the app's reply is recorded from the virtual speaker
and transcribed back in that language.

The language model is a stub OpenAI-compatible server that answers in the question's
language (the embedded SmolLM2 speaks only English; the app says so in a notice). The
greeting is turned off so the recording holds the answer alone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile

from tests.pipeline.test_run_cjk import QUESTIONS, REPLIES, _answer, _cer, _recognizer
from tests.support.live_app import (
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
from tests.support.openai_server import StubServer
from tests.support.system import require_tools

pytestmark = [pytest.mark.slow, pytest.mark.gui]

QUIET = 0.01
ENGINES_TIMEOUT = 240.0
REPLY_TIMEOUT = 180.0


@pytest.fixture(scope="module")
def speaker(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from bench.cjk_speech import CjkSpeaker, kokoro_files

    model, voices = kokoro_files(tmp_path_factory.mktemp("kokoro"))
    return CjkSpeaker(model, voices)


@pytest.mark.parametrize(("persona", "language"), [("yui", "ja"), ("ming", "zh")])
def test_the_desktop_app_talks_in_the_personas_language(
        persona: str, language: str, speaker: Any, tmp_path: Path) -> None:
    require_tools("pulseaudio", "pactl", "parec", "paplay", *([] if os.environ.get("DISPLAY")
                                                               else ["Xvfb"]))
    question = tmp_path / "question.wav"
    speech = speaker.speak(QUESTIONS[language], language)
    soundfile.write(str(question), np.concatenate([speech, np.zeros(16000, np.float32)]), 16000)

    pulse, xvfb = Pulse(), Xvfb()
    app: subprocess.Popen[bytes] | None = None
    recording: SpeakerRecording | None = None
    log_path = tmp_path / "app-stderr.log"

    def log_text() -> str:
        return read_text(log_path)

    with StubServer(_answer) as stub:
        config = tmp_path / "config"
        config.mkdir()
        (config / "settings.json").write_text(json.dumps({
            "persona_id": persona, "speak_greeting": False, "llm_backend": "server",
            "llm_server_url": stub.url, "llm_server_model": "stub"}))
        try:
            pulse.start()
            env = {**os.environ, **pulse.child_env(), "DISPLAY": xvfb.start(),
                   "QT_QPA_PLATFORM": "xcb", "HANASU_CONFIG_DIR": str(config),
                   "HANASU_DATA_DIR": str(tmp_path / "data"),
                   "HANASU_LOG_DIR": str(tmp_path / "log")}
            for name in ("HANASU_NO_AUDIO", "HANASU_EXIT_WHEN_READY"):
                env.pop(name, None)
            with log_path.open("wb") as stderr:
                app = subprocess.Popen([sys.executable, "-m", "app", "-v"], cwd=ROOT, env=env,
                                       stdout=subprocess.DEVNULL, stderr=stderr)
            assert wait_until(lambda: "Engines ready in" in log_text(), ENGINES_TIMEOUT, 0.5), \
                log_text()[-4000:]
            ready = f"multilingual speech recognizer ready for {language}"
            assert wait_until(lambda: ready in log_text(), ENGINES_TIMEOUT, 0.5), \
                log_text()[-4000:]
            assert wait_until(lambda: "audio devices: Microphone" in log_text(), 60), \
                log_text()[-4000:]
            recording = SpeakerRecording(tmp_path / "speaker.raw", pulse.child_env())
            rec = recording
            assert wait_until(lambda: rec.samples().size >= 16000, 30), "parec records nothing"
            time.sleep(1.0)
            before = rec.samples().size
            subprocess.run(["paplay", "-d", "micfeed", str(question)], env=pulse.child_env(),
                           check=True, capture_output=True, timeout=60)
            assert wait_until(lambda: re.search(r"user heard", log_text()) is not None,
                              REPLY_TIMEOUT, 0.5), log_text()[-4000:]
            wait_until(lambda: trailing_silence_seconds(rec.samples()[before:], QUIET) >= 1.5,
                       15)
            recording.stop()
            track = rec.samples()[before:]
            code = stop_process(app, signal.SIGTERM, timeout=10)
        finally:
            if recording is not None:
                recording.stop()
            if app is not None:
                stop_process(app, signal.SIGKILL, timeout=10)
            xvfb.stop()
            pulse.stop()
        bodies = stub.chat_bodies()

    text = log_text()
    said = re.findall(r"user said '(.*)'", text)
    assert said and _cer(QUESTIONS[language], said[-1], language) <= 0.2, said
    assert loud_seconds(track, QUIET) > 1.0
    heard = str(_recognizer(language).transcribe(track))  # parec records at 16 kHz
    print(f"{persona}: asked {said[-1]!r}; the app said {heard!r}")
    reply = REPLIES[language]
    # an acknowledgement ("えっと、", "嗯，") may come first on a loaded machine
    assert min(_cer(reply, heard[cut:], language) for cut in range(0, 4)) <= 0.25, heard
    assert ("日本語" if language == "ja" else "中文") in bodies[-1]["messages"][0]["content"]
    assert "Traceback" not in text, text[-3000:]
    assert code == 0, text[-3000:]

