"""The model manager: per role what is used now, the production model's size and state,
whether the production LLM fits the GPU, and downloads with progress and cancel.

Status and downloads run in BackgroundTasks, so the app (and the conversation) stays live.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.models.catalog import ModelEntry
from app.models.checks import label
from app.models.units import human
from app.ui.model_info import ModelsReport, RoleInfo, fits_gpu, gather
from app.ui.tasks import BackgroundTask, Report

ROLE_NAMES = {"llm": "Language model", "asr": "Speech recognizer", "tts": "Voice",
              "vad": "Voice activity"}


def _download(entry: ModelEntry, cancel: threading.Event, report: Report) -> Path:
    from app.models.download import download

    return download(entry, progress=lambda done, total: report((done, total)), cancel=cancel)


class _RoleRow(QFrame):
    """One role: what is used, the production model, and its download controls."""

    downloaded = Signal()

    def __init__(self, info: RoleInfo, report: ModelsReport) -> None:
        super().__init__()
        self.setObjectName("progressCard")
        self.info = info
        self._task: BackgroundTask[Path] | None = None
        self._cancel = threading.Event()
        grid = QGridLayout(self)
        grid.setContentsMargins(14, 10, 14, 10)
        grid.setHorizontalSpacing(14)
        title = QLabel(f"<b>{ROLE_NAMES.get(info.role, label(info.role))}</b>")
        grid.addWidget(title, 0, 0)
        grid.addWidget(QLabel(f"Using now: {info.used}"), 1, 0, 1, 2)
        entry = info.production
        text = "Production: none (the embedded model is the only one)"
        if entry is not None:
            text = f"Production: {entry.title} · {human(entry.known_size)} · {info.state}"
        self.state = QLabel(text)
        self.state.setObjectName("subtitle")
        self.state.setWordWrap(True)
        grid.addWidget(self.state, 2, 0, 1, 2)
        row = 3
        if entry is not None and info.role == "llm":
            fit = QLabel(fits_gpu(entry, report.gpu))
            fit.setObjectName("subtitle")
            fit.setWordWrap(True)
            grid.addWidget(fit, row, 0, 1, 2)
            row += 1
        self.progress = QProgressBar()
        self.progress.setFixedHeight(6)
        self.progress.hide()
        grid.addWidget(self.progress, row, 0, 1, 2)
        buttons = QHBoxLayout()
        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("primary")
        self.download_button.clicked.connect(self.start_download)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_download)
        self.cancel_button.hide()
        buttons.addStretch(1)
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.cancel_button)
        grid.addLayout(buttons, 0, 1, 2, 1)
        grid.setColumnStretch(0, 1)
        self.download_button.setVisible(entry is not None and info.state != "present")

    def start_download(self) -> None:
        entry = self.info.production
        if entry is None:
            return
        self._cancel = threading.Event()
        cancel = self._cancel
        task: BackgroundTask[Path] = BackgroundTask(
            lambda report: _download(entry, cancel, report), f"download-{entry.role}", self)
        task.progress.connect(self._progress)
        task.finished.connect(self._finished)
        task.failed.connect(lambda e: self._ended(f"Download stopped: {e}"))
        self._task = task
        self.download_button.hide()
        self.cancel_button.show()
        self.progress.setRange(0, 0)
        self.progress.show()
        self.state.setText("Starting download…")
        task.start()

    def cancel_download(self) -> None:
        self._cancel.set()
        self.state.setText("Cancelling… (the partial file is kept; Download resumes it)")

    @property
    def downloading(self) -> bool:
        return self._task is not None and not self._task.done

    def _progress(self, item: object) -> None:
        if isinstance(item, tuple) and len(item) == 2:
            done, total = int(item[0]), int(item[1])
            if total > 0:
                self.progress.setRange(0, 1000)
                self.progress.setValue(int(1000 * done / total))
            self.state.setText(f"Downloading… {human(done)} of {human(total)}")

    def _finished(self, path: Path) -> None:
        self._ended(f"Downloaded to {path}. Restart the engines to use it (Settings → Save).")
        self.downloaded.emit()

    def _ended(self, message: str) -> None:
        self.progress.hide()
        self.cancel_button.hide()
        self.download_button.setVisible(not message.startswith("Downloaded"))
        self.download_button.setText("Resume download")
        self.state.setText(message)


class ModelsDialog(QDialog):
    """Non-modal: downloads continue while the user keeps talking."""

    def __init__(self, parent: QWidget | None = None, gather_now: bool = True) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.setMinimumWidth(600)
        self.rows: list[_RoleRow] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(22, 18, 22, 18)
        self._layout.setSpacing(10)
        self.note = QLabel("Checking models and GPU…")
        self.note.setObjectName("subtitle")
        self._layout.addWidget(self.note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        self._buttons = buttons
        self._layout.addWidget(buttons)
        if gather_now:
            task: BackgroundTask[ModelsReport] = BackgroundTask(gather, "models-status", self)
            task.finished.connect(self.show_report)
            task.failed.connect(lambda e: self.note.setText(f"Cannot read the models: {e}"))
            task.start()

    def show_report(self, report: ModelsReport) -> None:
        gpu = report.gpu
        self.note.setText(f"GPU: {gpu.name}, {human(gpu.memory_bytes)}" if gpu
                          else "GPU: none detected — models run on the CPU.")
        for info in report.roles:
            row = _RoleRow(info, report)
            self.rows.append(row)
            self._layout.insertWidget(self._layout.count() - 1, row)
