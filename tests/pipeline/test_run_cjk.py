"""Japanese and Mandarin spoken conversations through ``hanasu run`` with the real
recognizer and voices: a question spoken by Kokoro (made by the test) goes in, the reply
comes out of the speaker track, and the reply is transcribed back in its language.

The language model is a stub OpenAI-compatible server that answers in the language of the
question: the embedded SmolLM2 speaks only English (the app says so), and what is tested
here is the speech chain around the model (language pinned or detected, the Japanese or
Chinese voice, the persona's prompt in its language, the per-turn note in auto mode).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile

from app.adapters.file_audio import read_audio
from tests.pipeline.test_run_cli import REPO
from tests.support.openai_server import StubRequest, StubServer, llama_chunks

pytestmark = pytest.mark.slow

REPLIES = {
    "ja": "いいですね、私も東京タワーが大好きです。夜景がとてもきれいですよ。",
    "zh": "我最喜欢秋天，天气凉快，风景也很美。",
}
QUESTIONS = {
    "ja": "東京タワーに行ったことがありますか？",
    "zh": "你最喜欢的季节是什么？",
}
_KANA = re.compile(r"[\u3040-\u30ff]")


def _answer(request: StubRequest) -> None:
    if request.path.endswith("/models"):
        request.json(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
        return
    if not request.body.get("stream"):  # the warm-up: one token, plain JSON
        request.json(200, {"choices": [{"index": 0, "message": {"role": "assistant",
                                                                "content": "は"}}],
                           "usage": {"prompt_tokens": 100, "completion_tokens": 1}})
        return
    last = request.body["messages"][-1]["content"]
    reply = REPLIES["ja"] if _KANA.search(last) else REPLIES["zh"]
    llama_chunks(request, list(reply))  # one character per token, as a real model streams


@pytest.fixture(scope="module")
def speaker(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from bench.cjk_speech import CjkSpeaker, kokoro_files

    model, voices = kokoro_files(tmp_path_factory.mktemp("kokoro"))
    return CjkSpeaker(model, voices)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data folder for the module: the embedded multilingual models are joined once."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    with StubServer(_answer) as server:
        yield server


def _question(speaker: Any, folder: Path, language: str) -> Path:
    speech = speaker.speak(QUESTIONS[language], language)  # 16 kHz
    path = folder / f"question-{language}.wav"
    audio = np.concatenate([np.zeros(8000, np.float32), speech, np.zeros(32000, np.float32)])
    soundfile.write(str(path), audio, 16000)
    return path


def _run(persona: str, question: Path, folder: Path, data_dir: Path,
         stub: StubServer) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], Path]:
    out, timeline = folder / f"{persona}.wav", folder / f"{persona}.json"
    env = {**os.environ, "HANASU_DATA_DIR": str(data_dir),
           "HANASU_CONFIG_DIR": str(folder / "config")}
    done = subprocess.run(
        [sys.executable, "-m", "app", "run", "--persona", persona, "--input", str(question),
         "--output", str(out), "--timeline", str(timeline), "--no-history",
         "--llm-url", stub.url, "--llm-model", "stub"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done, json.loads(timeline.read_text()), out


def _cer(reference: str, hypothesis: str, language: str) -> float:
    """Character error rate; Japanese compared by reading (katakana), so 綺麗 for きれい,
    a spelling choice of the recognizer, is not counted as a mishearing."""
    from bench.cjk_speech import cer

    if language == "ja":
        import pyopenjtalk

        reference, hypothesis = (str(pyopenjtalk.g2p(t, kana=True)).replace("ー", "")
                                 for t in (reference, hypothesis))
    return cer([(reference, hypothesis)])


def _answer_heard(track: Path, language: str, turn: dict[str, Any]) -> str:
    """The reply as heard back from the speaker track, from its first answer word on:
    the late-answer acknowledgement ("えっと、") may come first on a loaded machine. The
    track starts at the run's clock zero, the timeline's times are on that clock."""
    audio = read_audio(track)
    start = max(0, int((float(turn["first_answer_word"]) - 0.1) * 16000))
    return str(_recognizer(language).transcribe(audio[start:]))


def _recognizer(language: str) -> Any:
    """The app's own recognizer for ``language`` (Chinese comes out Simplified)."""
    from app.adapters.multilingual_asr import LanguageAwareRecognizer, load_multilingual_whisper
    from app.adapters.whisper_asr import WhisperRecognizer

    recognizer = LanguageAwareRecognizer(WhisperRecognizer(), load_multilingual_whisper)
    recognizer.set_languages([language])
    return recognizer


@pytest.mark.parametrize(("persona", "language"), [("yui", "ja"), ("ming", "zh")])
def test_a_persona_holds_a_spoken_conversation_in_its_language(
        persona: str, language: str, speaker: Any, data_dir: Path, stub: StubServer,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HANASU_DATA_DIR", str(data_dir))  # the test's own transcription too
    question = _question(speaker, tmp_path, language)
    done, timeline, out = _run(persona, question, tmp_path, data_dir, stub)
    [turn] = [t for t in timeline["turns"] if t["transcript"]]
    assert turn["language"] == language and turn["reply_language"] == language
    assert _cer(QUESTIONS[language], turn["transcript"], language) <= 0.2, turn["transcript"]
    system = stub.chat_bodies()[-1]["messages"][0]["content"]
    assert ("日本語" if language == "ja" else "中文") in system  # its rules, in its language
    heard = _answer_heard(out, language, turn)
    print(f"{persona}: heard {turn['transcript']!r}, replied {heard!r}, "
          f"V2V {turn['voice_to_voice']:.2f} s")
    assert _cer(REPLIES[language], heard, language) <= 0.2, heard
    assert "English voice" not in done.stderr


def test_the_tutor_answers_a_japanese_sentence_in_japanese(
        speaker: Any, data_dir: Path, stub: StubServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Riko (English tutor, languages en/ja/zh) hears Japanese among three languages,
    asks the model for a Japanese answer and speaks it with the Japanese voice."""
    monkeypatch.setenv("HANASU_DATA_DIR", str(data_dir))
    question = _question(speaker, tmp_path, "ja")
    _, timeline, out = _run("riko", question, tmp_path, data_dir, stub)
    [turn] = [t for t in timeline["turns"] if t["transcript"]]
    assert turn["language"] == "ja" and turn["reply_language"] == "ja"
    user = stub.chat_bodies()[-1]["messages"][-1]["content"]
    assert "日本語で答えてください" in user  # the per-turn note of auto mode
    heard = _answer_heard(out, "ja", turn)
    assert _cer(REPLIES["ja"], heard, "ja") <= 0.2, heard
