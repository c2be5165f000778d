"""Timers by voice, spoken by people's voices in three languages, through ``hanasu run``
with the real recognizer, voices and embedded model: the request is answered by the timer
tool (not the model), and the timer rings a few seconds later in the same run; both are
heard back from the speaker track in the persona's language."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile

from app.adapters.file_audio import read_audio
from tests.pipeline.test_run_cli import REPO

pytestmark = pytest.mark.slow

CASES = {
    # persona, the request, the tool's answer, words of the ring heard back (the voices'
    # own words for "timer" come back misheard: 技术器 for 计时器)
    "en": ("hana", "Set a timer for four seconds.", "Timer set for four seconds.",
           ("timer", "done")),
    "ja": ("yui", "四秒のタイマーをセットして。", "四秒のタイマーをセットしました。",
           ("終わ",)),
    "zh": ("ming", "设一个四秒的计时器。", "好的，四秒的计时器已设置。", ("到了",)),
}


@pytest.fixture(scope="module")
def speaker(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from bench.cjk_speech import CjkSpeaker, kokoro_files

    model, voices = kokoro_files(tmp_path_factory.mktemp("kokoro"))
    return CjkSpeaker(model, voices)


def _speech(language: str, text: str, speaker: Any, folder: Path) -> np.ndarray:
    if language == "en":
        path = folder / "en.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), text],
                       check=True)
        return read_audio(path)
    return np.asarray(speaker.speak(text, language), dtype=np.float32)  # 16 kHz


def _heard(track: Path, language: str, start_s: float) -> str:
    from app.adapters.multilingual_asr import LanguageAwareRecognizer, load_multilingual_whisper
    from app.adapters.whisper_asr import WhisperRecognizer

    recognizer = LanguageAwareRecognizer(WhisperRecognizer(), load_multilingual_whisper)
    recognizer.set_languages([language])
    audio = read_audio(track)
    return str(recognizer.transcribe(audio[int(start_s * 16_000):]))


@pytest.mark.parametrize("language", ["en", "ja", "zh"])
def test_a_spoken_timer_is_set_and_rings(
        language: str, speaker: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    persona, request, confirmation, ring_words = CASES[language]
    data = tmp_path / "data"
    monkeypatch.setenv("HANASU_DATA_DIR", str(data))  # the test's own transcription too
    speech = _speech(language, request, speaker, tmp_path)
    audio = np.concatenate([np.zeros(8000, np.float32), speech, np.zeros(11 * 16000, np.float32)])
    question, out, timeline = tmp_path / "q.wav", tmp_path / "out.wav", tmp_path / "t.json"
    soundfile.write(str(question), audio, 16000)
    env = {**os.environ, "HANASU_DATA_DIR": str(data), "HANASU_CONFIG_DIR": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-m", "app", "run", "--persona", persona, "--input", str(question),
         "--output", str(out), "--timeline", str(timeline)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    turns = [t for t in json.loads(timeline.read_text())["turns"] if t["transcript"]]
    assert len(turns) == 1, [t["transcript"] for t in turns]
    [turn] = turns
    assert turn["heard_text"] == confirmation  # the tool's answer, whole
    assert turn["prompt_tokens"] in (None, 0)  # the model was not asked
    # the ring: after the answer, said by itself into the silence
    heard = _heard(out, language, float(turn["first_sample_played"]) + 1.5)
    assert all(word in heard.lower() for word in ring_words), heard
