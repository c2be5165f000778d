"""The server language model against a real ``llama_cpp.server`` that needs an API key,
is killed mid-reply, and comes back: each failure is one line, and the same engine
works again as soon as the server does (what the app does between turns)."""

from __future__ import annotations

import pytest

from app.adapters.openai_errors import LlmServerError
from app.adapters.openai_llm import OpenAILanguageModel
from app.adapters.sampling import SamplingConfig
from app.core.ports import ChatMessage
from tests.support.openai_server import MODEL_ALIAS, LlamaCppServer

KEY = "hanasu-test-key-7331"
STORY = [
    ChatMessage("system", "You are a storyteller."),
    ChatMessage("user", "Tell me a long story about a lighthouse keeper."),
]


@pytest.mark.slow
def test_wrong_key_then_killed_mid_reply_then_back(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = tmp_path_factory.mktemp("server")
    server = LlamaCppServer(folder / "first.log", api_key=KEY)
    try:
        server.start()
        wrong = OpenAILanguageModel(server.url, MODEL_ALIAS, api_key="not-the-key")
        with pytest.raises(LlmServerError, match=r"API key was refused \(HTTP 401") as refused:
            list(wrong.stream(STORY, lambda: False))
        assert "not-the-key" not in str(refused.value) and "\n" not in str(refused.value)

        llm = OpenAILanguageModel(
            server.url, MODEL_ALIAS, api_key=KEY, sampling=SamplingConfig(max_tokens=150)
        )
        heard: list[str] = []
        with pytest.raises(LlmServerError, match=r"cut|connection") as cut:
            for piece in llm.stream(STORY, lambda: False):
                heard.append(piece)
                if len(heard) == 3:
                    server.kill()  # SIGKILL mid-reply, like a crashed or rebooted box
        assert len(heard) >= 3 and "\n" not in str(cut.value)
        with pytest.raises(LlmServerError, match="cannot connect"):
            list(llm.stream(STORY, lambda: False))  # down: one line, nothing breaks

        back = LlamaCppServer(folder / "second.log", port=server.port, api_key=KEY)
        try:
            back.start()
            reply = "".join(llm.stream(STORY, lambda: False))  # the same engine, no rebuild
            assert reply.strip()
        finally:
            back.stop()
    finally:
        server.stop()
