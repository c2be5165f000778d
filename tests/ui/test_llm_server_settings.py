"""Settings: the language model "On this computer" or "On a server", the background
"Test connection", and switching between them without restarting the app."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.adapters.fakes import FakeLanguageModel
from app.adapters.openai_errors import LlmServerError
from app.adapters.openai_llm import OpenAILanguageModel
from app.core.events import StageFailed
from app.core.pipeline import Engines
from app.storage.settings import Settings, load_settings, save_settings
from app.ui.llm_choice import describe
from app.ui.session import Session
from app.ui.settings_dialog import SettingsDialog
from app.ui.window import MainWindow
from tests.support.openai_server import StubRequest, StubServer, free_port, llama_chunks

KEY = "sk-ui-secret-99"


def models_then_reply(request: StubRequest) -> None:
    if request.path.endswith("/models"):
        request.json(200, {"data": [{"id": "gemma-4", "max_model_len": 32768}]})
    else:
        time.sleep(0.4)  # a slow first token: the GUI must not wait for it
        llama_chunks(request, ["Hello", " there"])


def test_server_fields_are_collected_and_the_key_is_not_shown(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(), load_devices=False)
    qtbot.addWidget(dialog)
    choice = dialog.llm_choice
    assert choice.backend() == "local" and choice.server_box.isHidden()
    choice.where.setCurrentIndex(choice.where.findData("server"))
    assert not choice.server_box.isHidden() and choice.local_row.isHidden()
    choice.url.setText(" http://gpu-box:8080/v1 ")
    choice.model.setText("gemma-4-26b-a4b")
    choice.key.setText(KEY)
    assert choice.key.displayText() != KEY  # password echo
    result = dialog.collect()
    assert result.llm_backend == "server" and result.llm_server_url == "http://gpu-box:8080/v1"
    assert result.llm_server_model == "gemma-4-26b-a4b" and result.llm_api_key == KEY
    assert KEY not in repr(result)


def test_server_without_url_is_refused_in_one_line(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(llm_backend="server"), load_devices=False)
    qtbot.addWidget(dialog)
    dialog._accept()
    assert dialog.result_settings is None
    assert "no language model server URL" in dialog.error.text()


def test_test_connection_runs_in_the_background(qtbot: QtBot) -> None:
    with StubServer(models_then_reply) as stub:
        dialog = SettingsDialog(
            Settings(llm_backend="server", llm_server_url=stub.url), load_devices=False
        )
        qtbot.addWidget(dialog)
        choice = dialog.llm_choice
        started = time.monotonic()
        choice.test_button.click()
        assert time.monotonic() - started < 0.3  # returned at once: the work is elsewhere
        assert choice.status.text() == "Testing…" and not choice.test_button.isEnabled()
        qtbot.waitUntil(lambda: choice.status.text().startswith("Connected"), timeout=10_000)
    text = choice.status.text()
    assert "gemma-4" in text and "32,768" in text and "first token in" in text
    assert choice.test_button.isEnabled()


def test_test_connection_failure_is_one_line(qtbot: QtBot) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    dialog = SettingsDialog(Settings(llm_backend="server", llm_server_url=url), load_devices=False)
    qtbot.addWidget(dialog)
    dialog.llm_choice.test_button.click()
    qtbot.waitUntil(lambda: dialog.llm_choice.status.text().startswith("Failed"), timeout=10_000)
    assert "cannot connect" in dialog.llm_choice.status.text()


def test_describe_without_a_context_length() -> None:
    from app.adapters.openai_catalog import ServerInfo

    line = describe(ServerInfo("smollm2", None, 0.123, "Hi"))
    assert line == "Connected: smollm2, context not reported, first token in 123 ms"


def test_settings_with_a_key_are_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    save_settings(Settings(llm_backend="server", llm_server_url="h:1", llm_api_key=KEY), path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_settings(path).llm_api_key == KEY


def test_switching_to_a_server_and_back_without_restarting(
    qtbot: QtBot, window: MainWindow
) -> None:
    with StubServer(models_then_reply) as stub:
        session = Session(window.bridge.post, fake=True, parent=window)
        with qtbot.waitSignal(session.ready, timeout=10_000) as local:
            session.start(Settings(), window.persona)
        assert isinstance(local.args[0].engines.llm, FakeLanguageModel)
        server = Settings(llm_backend="server", llm_server_url=stub.url, llm_server_model="m")
        with qtbot.waitSignal(session.ready, timeout=10_000) as remote:
            session.start(server, window.persona)
        llm = remote.args[0].engines.llm
        assert isinstance(llm, OpenAILanguageModel) and llm.base_url == stub.url
        with qtbot.waitSignal(session.ready, timeout=10_000) as back:
            session.start(Settings(), window.persona)
        assert isinstance(back.args[0].engines.llm, FakeLanguageModel)
        session.shutdown()


class _DownLlm(FakeLanguageModel):
    def warm(self, messages: object) -> object:  # type: ignore[override]
        raise LlmServerError("language model server http://gpu-box:8080/v1: cannot connect")


def test_server_down_at_start_is_a_line_not_a_failed_start(window: MainWindow) -> None:
    from app.adapters.fakes import FakeRecognizer, FakeSynthesizer, FakeVoiceActivity

    posted: list[object] = []
    session = Session(posted.append, fake=False, parent=window)
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(), _DownLlm(), FakeSynthesizer())
    session._warm(engines, window.persona)  # does not raise: the turns will retry
    [event] = posted
    assert isinstance(event, StageFailed) and event.stage == "llm"
    assert "cannot connect" in event.message
