"""Where the language model runs: "On this computer" (a GGUF file) or "On a server" (an
OpenAI-compatible URL, model name and optional API key), with "Test connection".

The test talks to the network, so it runs in a BackgroundTask and never blocks the GUI
thread; it shows the model, the context length when the server tells it, and a measured
time to the first token. The API key field never echoes the key.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.errors import first_line
from app.storage.settings import Settings
from app.ui.plain import plain
from app.ui.tasks import BackgroundTask, Report

LOCAL, SERVER = "local", "server"
URL_HINT = "http://gpu-box:8080/v1"


def _test_connection(url: str, model: str | None, key: str | None) -> Any:
    """Runs on the worker thread: connect, list models, time a short reply."""
    from app.adapters.openai_llm import OpenAILanguageModel
    from app.adapters.sampling import SamplingConfig

    llm = OpenAILanguageModel(
        url, model, key, sampling=SamplingConfig(max_tokens=16), read_timeout_s=20.0
    )
    try:
        return llm.probe()
    finally:
        llm.close()


def describe(info: Any) -> str:
    """One line for a ServerInfo: model, context, time to first token."""
    context = f"context {info.context_length:,} tokens" if info.context_length else (
        "context not reported"
    )
    return f"Connected: {info.model}, {context}, first token in {info.ttft_s * 1000:.0f} ms"


class LlmChoice(QWidget):
    """The "Language model" row of the settings: where it runs and how to reach it."""

    def __init__(self, settings: Settings, local_row: QWidget) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # never squashed
        self.where = QComboBox()
        self.where.addItem("On this computer", LOCAL)
        self.where.addItem("On a server", SERVER)
        self.where.setCurrentIndex(self.where.findData(settings.llm_backend))
        layout.addWidget(self.where)
        self.local_row = local_row
        layout.addWidget(local_row)
        self.server_box = QWidget()
        form = QFormLayout(self.server_box)
        form.setContentsMargins(0, 0, 0, 0)
        self.url = QLineEdit(settings.llm_server_url or "")
        self.url.setPlaceholderText(URL_HINT)
        self.model = QLineEdit(settings.llm_server_model or "")
        self.model.setPlaceholderText("The first model the server lists")
        self.key = QLineEdit(settings.llm_api_key or "")
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("Optional")
        form.addRow("Server URL", self.url)
        form.addRow("Model", self.model)
        form.addRow("API key", self.key)
        test_row = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.status = plain(QLabel(""))  # the server's model names and errors
        self.status.setObjectName("subtitle")
        self.status.setWordWrap(True)
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.status, 1)
        form.addRow("", test_row)
        layout.addWidget(self.server_box)
        self.where.currentIndexChanged.connect(self._show_choice)
        self._show_choice()
        self._task: BackgroundTask[Any] | None = None

    def backend(self) -> str:
        return str(self.where.currentData())

    def _show_choice(self) -> None:
        server = self.backend() == SERVER
        self.server_box.setVisible(server)
        self.local_row.setVisible(not server)

    def values(self) -> dict[str, Any]:
        """The settings fields this row edits (the local path stays the dialog's)."""
        return {
            "llm_backend": self.backend(),
            "llm_server_url": self.url.text().strip() or None,
            "llm_server_model": self.model.text().strip() or None,
            "llm_api_key": self.key.text().strip() or None,
        }

    def problem(self) -> str | None:
        """Why these values cannot be saved, in one line (None when they can)."""
        if self.backend() != SERVER:
            return None
        from app.adapters.openai_errors import LlmServerError, api_base

        try:
            api_base(self.url.text())
        except LlmServerError as exc:
            return f"Language model server: {exc}"
        return None

    def test_connection(self) -> None:
        """Start the test in the background; the result lands in ``status``."""
        trouble = self.problem()
        if trouble:
            self.status.setText(trouble)
            return
        values = self.values()
        url, model = values["llm_server_url"], values["llm_server_model"]
        key = values["llm_api_key"]

        def work(_report: Report) -> Any:
            return _test_connection(url, model, key)

        self.test_button.setEnabled(False)
        self.status.setText("Testing…")
        task: BackgroundTask[Any] = BackgroundTask(work, "llm-test", self)
        task.finished.connect(self._tested)
        task.failed.connect(self._test_failed)
        self._task = task
        task.start()

    def _tested(self, info: Any) -> None:
        self.test_button.setEnabled(True)
        self.status.setText(describe(info))

    def _test_failed(self, error: BaseException) -> None:
        self.test_button.setEnabled(True)
        self.status.setText(f"Failed: {first_line(error)}")
