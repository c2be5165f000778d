"""The pipeline with its language model on a server that drops the first reply mid-stream:
the turn ends, what was said stays in the conversation, and the next turn is answered by
the same engine, no restart (fake listening and voice, real HTTP to a stub server)."""

from __future__ import annotations

import time

import numpy as np

from app.adapters.fakes import FakeRecognizer, FakeSynthesizer, FakeVoiceActivity
from app.adapters.openai_llm import OpenAILanguageModel
from app.cli.file_session import RunResult, run_file
from app.core.pipeline import Engines
from app.personas import load_personas
from tests.pipeline.conftest import silence, voiced
from tests.support.openai_server import StubRequest, StubServer, llama_chunks


def _stub(cut_first_after_s: float | None) -> StubServer:
    """Answers every reply in full, except the first, which it cuts off after its first
    sentence (and ``cut_first_after_s`` seconds, so that sentence can be heard)."""

    def answer(request: StubRequest) -> None:
        if not request.body.get("stream"):  # the persona warm-up
            request.json(200, {"choices": [], "usage": {"prompt_tokens": 50}})
            return
        if sum(1 for b in stub.chat_bodies() if b.get("stream")) == 1:
            request.start_stream()
            for piece in ["Hello", " there", ".", " I"]:
                request.event({"choices": [{"index": 0, "delta": {"content": piece}}]})
            time.sleep(cut_first_after_s or 0.0)
            request.cut()  # killed mid-reply
            return
        llama_chunks(request, ["Yes", ",", " I", " am", " here", "."], delay_s=0.02)

    stub = StubServer(answer)  # ``answer`` counts the requests it has seen
    return stub


def _conversation(cut_after_s: float | None) -> tuple[RunResult, list[list[dict[str, str]]]]:
    persona = load_personas().default
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(4.0), voiced(1.0), silence(2.5)])
    with _stub(cut_after_s) as stub:
        llm = OpenAILanguageModel(stub.url, "m")
        recognizer = FakeRecognizer(["What is your name?", "Are you there?"])
        engines = Engines(FakeVoiceActivity(), recognizer, llm, FakeSynthesizer())
        result = run_file(engines, persona, audio, max_wait_s=20)
        return result, [b["messages"] for b in stub.chat_bodies() if b.get("stream")]


def test_what_was_heard_before_the_cut_stays_and_the_next_turn_is_answered() -> None:
    result, prompts = _conversation(cut_after_s=1.5)
    first, second = result.turns[0], result.turns[-1]
    assert first.reply_text.startswith("Hello") and first.reply_text.endswith("I")  # cut there
    assert first.heard_text.startswith("Hello")  # its first sentence had played
    # history: the question and what was heard of the cut reply, then the next question
    assert prompts[-1][1:] == [
        {"role": "user", "content": "What is your name?"},
        {"role": "assistant", "content": first.heard_text},
        {"role": "user", "content": "Are you there?"},
    ]
    assert second.first_sample_played is not None and second.reply_text == "Yes, I am here."


def test_a_question_whose_reply_was_cut_before_any_sound_is_not_lost() -> None:
    """The cut comes before anything played: what was already said is played, then the
    persona apologises and asks again (item 6 of issue 23), so the user knows; the question
    stays in the history with what they heard, and the next one is answered."""
    result, prompts = _conversation(cut_after_s=None)
    first, second = result.turns[0], result.turns[-1]
    assert first.reply_text == "Hello there. I"
    assert first.heard_text.startswith("Hello there.") and "Sorry" in first.heard_text
    assert prompts[-1][1] == {"role": "user", "content": "What is your name?"}
    assert "Sorry" in prompts[-1][2]["content"]
    assert prompts[-1][-1] == {"role": "user", "content": "Are you there?"}
    assert second.first_sample_played is not None and second.reply_text == "Yes, I am here."
