"""`python -m app run --llm-url ...`: a whole spoken conversation, barge-in included, with
the language model on a real OpenAI-compatible server (``llama_cpp.server`` on the
embedded model, 127.0.0.1), and the server's failures as one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.adapters.file_audio import read_audio
from tests.pipeline.test_run_cli import espeak, hanasu, words
from tests.support.openai_server import MODEL_ALIAS, LlamaCppServer, free_port, llama_cpp_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaCppServer]:
    with llama_cpp_server(tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture(scope="module")
def recognizer():  # type: ignore[no-untyped-def]
    from app.adapters.whisper_asr import WhisperRecognizer

    return WhisperRecognizer()


@pytest.mark.slow
def test_conversation_with_barge_in_through_the_server(
    tmp_path: Path,
    server: LlamaCppServer,
    recognizer,  # type: ignore[no-untyped-def]
) -> None:
    first, second = tmp_path / "a.wav", tmp_path / "b.wav"
    espeak(first, "Can you tell me a long story about the sea?", 0.5, 0.0)
    espeak(second, "Stop. What time is it?", 0.0, 1.0)
    a, rate = soundfile.read(str(first), dtype="float32")
    b, _ = soundfile.read(str(second), dtype="float32")
    # talks over the reply after 4 s: the reply must have started by then, or the user's
    # words are taken as the rest of the question (a reopened turn), not as a barge-in
    gap = np.zeros(int(4.0 * rate), dtype=np.float32)
    combined = tmp_path / "barge.wav"
    soundfile.write(str(combined), np.concatenate([a, gap, b]), rate)
    out, timeline = tmp_path / "out.wav", tmp_path / "t.json"
    mark = server.mark()
    done = hanasu(
        "run", "--input", str(combined), "--output", str(out), "--timeline", str(timeline),
        "--llm-url", server.url, "--llm-model", MODEL_ALIAS,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "POST /v1/chat/completions" in server.log()[mark:]  # the replies came from it
    turns = json.loads(timeline.read_text())["turns"]
    assert 2 <= len(turns) <= 3, turns
    barge_at = turns[0]["barge_in"]
    user_again = (a.size + gap.size) / rate
    assert barge_at is not None and user_again < barge_at < user_again + 1.0
    assert turns[0]["interrupted"]
    track, out_rate = soundfile.read(str(out), dtype="float32")
    # "Stop." may be a turn of its own, cut off before it was answered (no barge-in then)
    last_barge = max(t["barge_in"] for t in turns[:-1] if t["barge_in"] is not None)
    second_start = turns[-1]["first_sample_played"]
    assert second_start is not None and second_start > last_barge
    quiet = track[int((last_barge + 0.1) * out_rate) : int(second_start * out_rate) - 1]
    assert quiet.size == 0 or float(np.max(np.abs(quiet))) < 0.01
    assert "time" in turns[-1]["transcript"].lower()
    reply = recognizer.transcribe(read_audio(out)[int(second_start * 16_000) :])
    assert len(words(reply)) >= 2
    # the second turn's prompt starts with the first one's: the server reused its cache
    hits = server.log()[mark:].count("prefix-match hit")
    assert hits >= 2, server.log()[mark:][-2000:]


@pytest.mark.slow
def test_nothing_listening_is_one_line(tmp_path: Path) -> None:
    question = tmp_path / "q.wav"
    espeak(question, "Hello there.", 0.3, 0.5)
    url = f"http://127.0.0.1:{free_port()}/v1"
    done = hanasu(
        "run", "--input", str(question), "--output", str(tmp_path / "o.wav"), "--llm-url", url
    )
    assert done.returncode == 1
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("hanasu:")]
    assert len(lines) == 1 and "cannot connect" in lines[0] and url.removesuffix("/v1") in lines[0]
    assert "Traceback" not in done.stderr


def test_api_key_variable_that_is_not_set_is_one_line(tmp_path: Path) -> None:
    question = tmp_path / "q.wav"
    espeak(question, "Hello there.", 0.3, 0.5)
    done = hanasu(
        "run", "--input", str(question), "--output", str(tmp_path / "o.wav"),
        "--llm-url", "http://127.0.0.1:9/v1", "--llm-api-key-env", "HANASU_TEST_NO_SUCH_VAR",
    )  # fmt: skip
    assert done.returncode == 1
    assert "HANASU_TEST_NO_SUCH_VAR is not set" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_bench_reports_in_process_and_server_side_by_side(tmp_path: Path) -> None:
    from tests.support.openai_server import StubRequest, StubServer, llama_chunks

    def answer(request: StubRequest) -> None:
        if request.body.get("stream"):
            llama_chunks(request, ["Hello", " there", ".", " Nice", " day", "."])
        else:  # the warm-up request
            request.json(200, {"choices": [], "usage": {"prompt_tokens": 90}})

    report = tmp_path / "bench.json"
    with StubServer(answer) as stub:
        done = hanasu(
            "bench", "--fake-engines", "--count", "1", "--no-baseline", "--no-smart-turn",
            "--llm-url", stub.url, "--llm-model", "m", "--compare-local", "--json", str(report),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(report.read_text())["summary"]
    assert set(summary) == {"in_process", "server"}
    for name in ("in_process", "server"):
        assert summary[name]["replied"] == 1, summary
        assert summary[name]["voice_to_voice_s"]["p50"] > 0
        assert "llm_first_token" in summary[name]["stages_s"]
    assert summary["server"]["tokens_per_chunk"]["p50"] == 1.0  # the server's own counts
    assert 0.5 < summary["in_process"]["tokens_per_chunk"]["p50"] <= 2.0
    assert "in_process q00.wav: v2v" in done.stdout and "server q00.wav: v2v" in done.stdout
