"""The model manager: the tier recommended for this machine and why (with an override), per
role what is used now, the chosen tier's model, its size and state, whether the LLM fits the
GPU, and downloads with progress and cancel (one button fetches the whole tier).

Status and downloads run in BackgroundTasks, so the app (and the conversation) stays live.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.models.catalog import ModelEntry
from app.models.checks import label
from app.models.endpoint import hub_endpoint
from app.models.errors import ModelError
from app.models.units import human
from app.storage.settings import Settings
from app.ui.model_info import GIB, ModelsReport, RoleInfo, fits_gpu, gather
from app.ui.tasks import BackgroundTask, Report
from app.ui.tier_panel import TierPanel, download_stopped, plain_label

ROLE_NAMES = {"llm": "Language model", "asr": "Speech recognizer", "tts": "Voice",
              "vad": "Voice activity"}


def _download(entry: ModelEntry, cancel: threading.Event, report: Report,
              endpoint: str | None = None) -> Path:
    from app.models.download import download

    return download(entry, progress=lambda done, total: report((done, total)), cancel=cancel,
                    endpoint=endpoint if entry.source == "hf" else None)


class _RoleRow(QFrame):
    """One role: what is used, the production model, and its download controls."""

    downloaded = Signal()
    busy_changed = Signal()

    def __init__(self, info: RoleInfo, report: ModelsReport,
                 endpoint: Callable[[], str | None] = lambda: None) -> None:
        super().__init__()
        self.setObjectName("progressCard")
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.info = info
        self._endpoint = endpoint
        self._task: BackgroundTask[Path] | None = None
        self._cancel = threading.Event()
        grid = QGridLayout(self)
        grid.setContentsMargins(14, 10, 14, 10)
        grid.setHorizontalSpacing(14)
        title = QLabel(f"<b>{ROLE_NAMES.get(info.role, label(info.role))}</b>")
        grid.addWidget(title, 0, 0)
        grid.addWidget(plain_label(f"Using now: {info.used}"), 1, 0, 1, 2)
        entry = info.production
        text = "Uses the embedded model (nothing to download)"
        if entry is not None:
            text = f"Model: {entry.title} · {human(entry.expected_size)} · {info.state}"
        self.state = plain_label(text, "subtitle")
        grid.addWidget(self.state, 2, 0, 1, 2)
        row = 3
        if entry is not None and info.role == "llm":
            fit = plain_label(fits_gpu(entry, report.gpu, info.placement), "subtitle")
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

    @property
    def wants_download(self) -> bool:
        """A model is missing or partial here and no download of it runs."""
        return (self.info.production is not None and not self.downloading
                and not self.download_button.isHidden())

    def start_download(self) -> None:
        entry = self.info.production
        if entry is None or self.downloading:
            return
        try:
            endpoint = self._endpoint()
        except ModelError as exc:
            self.state.setText(f"Not downloaded: {exc}")
            return
        self._cancel = threading.Event()
        cancel = self._cancel
        task: BackgroundTask[Path] = BackgroundTask(
            lambda report: _download(entry, cancel, report, endpoint), f"download-{entry.role}",
            self)
        task.progress.connect(self._progress)
        task.finished.connect(self._finished)
        task.failed.connect(lambda e: self._ended(
            download_stopped(str(e), endpoint, "above")))
        self._task = task
        self.download_button.hide()
        self.cancel_button.show()
        self.progress.setRange(0, 0)
        self.progress.show()
        self.state.setText("Starting download…")
        task.start()
        self.busy_changed.emit()

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
        self.busy_changed.emit()


class ModelsDialog(QDialog):
    """Non-modal: downloads continue while the user keeps talking.

    ``settings`` gives the saved tier choice and mirror; ``on_settings`` receives the new
    settings when the user changes either (the window saves them; no restart needed)."""

    def __init__(self, parent: QWidget | None = None, gather_now: bool = True,
                 settings: Settings | None = None,
                 on_settings: Callable[[Settings], None] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.setMinimumWidth(600)
        self.settings = settings or Settings()
        self._on_settings = on_settings
        self.rows: list[_RoleRow] = []
        self.panel: TierPanel | None = None
        self._report: ModelsReport | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(22, 18, 22, 18)
        self._layout.setSpacing(10)
        self.note = plain_label("Checking models and this machine…", "subtitle")
        self._layout.addWidget(self.note)
        # On a short screen the rows scroll instead of being squashed (which clipped text).
        self._rows_box = QWidget()
        self._rows_layout = QVBoxLayout(self._rows_box)
        self._rows_layout.setContentsMargins(0, 0, 0, 0)
        self._rows_layout.setSpacing(10)
        self._rows_layout.addStretch(1)
        self.scroller = QScrollArea()
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        self.scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroller.setWidget(self._rows_box)
        self._layout.addWidget(self.scroller, 1)
        # sized for the rows still to come (the report arrives after the dialog is shown)
        screen = self.screen().availableGeometry().height() if self.screen() else 700
        self.resize(680, max(300, min(640, screen - 60)))
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
        self._report = report
        gpu = report.gpu
        self.note.setText(f"GPU: {gpu.name}, {gpu.memory_bytes / GIB:.0f} GB" if gpu
                          else "GPU: none detected — models run on the CPU.")
        rows = report.roles
        if report.advice is not None and report.catalog is not None and report.catalog.tiers:
            panel = TierPanel(report.catalog, report.advice, self.settings.model_tier,
                              self.settings.model_endpoint)
            panel.tier_changed.connect(self._tier_changed)
            panel.download_all.connect(self.download_tier)
            panel.mirror_changed.connect(self._mirror_changed)
            self.panel = panel
            self._rows_layout.insertWidget(0, panel)
            rows = report.roles_for(report.catalog.tiers[panel.chosen])
        self._show_rows(rows)

    def _show_rows(self, infos: list[RoleInfo]) -> None:
        assert self._report is not None
        for row in self.rows:
            row.setParent(None)
            row.deleteLater()
        self.rows = []
        for info in infos:
            row = _RoleRow(info, self._report, self._endpoint)
            row.busy_changed.connect(self._update_panel)
            self.rows.append(row)
            self._rows_layout.insertWidget(self._rows_layout.count() - 1, row)
        self._update_panel()

    def _endpoint(self) -> str | None:
        return hub_endpoint(self.settings.model_endpoint)

    def _update_panel(self) -> None:
        if self.panel is None:
            return
        missing = sum(r.info.production.expected_size for r in self.rows
                      if r.wants_download and r.info.production is not None)
        self.panel.set_to_download(missing, any(r.downloading for r in self.rows))

    def download_tier(self) -> None:
        """The one click: fetch every model of the chosen tier that is not here yet."""
        for row in self.rows:
            if row.wants_download:
                row.start_download()

    def _tier_changed(self, name: str) -> None:
        if self._report is None or self._report.catalog is None or self.panel is None:
            return
        recommended = self.panel.advice.recommendation.tier.name
        self._store(self.settings.replace(model_tier=None if name == recommended else name))
        self._show_rows(self._report.roles_for(self._report.catalog.tiers[name]))

    def _mirror_changed(self, url: object) -> None:
        self._store(self.settings.replace(model_endpoint=url if isinstance(url, str) else None))

    def _store(self, settings: Settings) -> None:
        if settings == self.settings:
            return
        self.settings = settings
        if self._on_settings is not None:
            self._on_settings(settings)
