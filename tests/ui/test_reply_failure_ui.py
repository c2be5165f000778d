"""In the window, a reply the language model server fails to give is an apology the
persona says aloud (and shows in the transcript), plus one quiet notice with the reason;
no traceback, no red banner, and the conversation goes on."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from pytestqt.qtbot import QtBot

from app.adapters.fakes import FakeLanguageModel, FakeRecognizer, FakeSynthesizer, FakeVoiceActivity
from app.adapters.openai_errors import LlmServerError
from app.core.apology import APOLOGIES
from app.core.pipeline import Engines, VoicePipeline
from app.core.ports import ChatMessage, PromptStats
from app.ui.window import MainWindow
from tests.ui.conftest import Microphone, Speaker, utterance

FAILURE = "language model server http://127.0.0.1:8080/v1: server error (HTTP 500: boom)"


class _ServerDown(FakeLanguageModel):
    def stream(
        self,
        messages: Sequence[ChatMessage],
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        raise LlmServerError(FAILURE)
        yield ""  # a generator, as the real one is


def test_a_failed_reply_is_a_spoken_apology_and_a_notice(qtbot: QtBot, window: MainWindow) -> None:
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(), _ServerDown(), FakeSynthesizer())
    pipeline = VoicePipeline(engines, window.persona.full_system_prompt())
    pipeline.add_observer(window.bridge.post)
    pipeline.start()
    window.attach_pipeline(pipeline)
    try:
        speaker = Speaker(pipeline, speed=2.0)
        mic = Microphone(pipeline, *utterance())
        with qtbot.waitSignal(window.bridge.playback_ended, timeout=15_000) as ended:
            pass
        speaker.stop()
        qtbot.waitUntil(lambda: mic.done, timeout=5_000)
        turn_id, heard, interrupted = ended.args
        assert heard == APOLOGIES["en"] and not interrupted  # said aloud, in full
        assert APOLOGIES["en"] in window.transcript.reply_html(turn_id)
        qtbot.waitUntil(lambda: bool(window.notices.messages), timeout=3_000)
        [notice] = window.notices.messages
        assert notice == f"{window.persona.name} could not answer and apologised: {FAILURE}"
        assert window.notices.button.isVisible()
        assert not window.banner.isVisible()  # not an error that stops the conversation
    finally:
        window.detach_pipeline()
        pipeline.stop()
