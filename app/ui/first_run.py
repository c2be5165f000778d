"""The welcome page on the very first launch: what runs now, what this machine should download.

One page, never modal: the built-in models load and the user can talk while it is open and
while the recommended models download. It shows the recommended tier (name, size, time to the
first word), downloads it in one click with progress, speed and time left, resumes after
"Stop" or a failure (the downloader keeps `.part` files), and "Not now" closes it. It is shown
once: the window stores ``welcomed`` when it opens.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLayout,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.models.catalog import ModelEntry
from app.models.endpoint import hub_endpoint
from app.models.errors import ModelError
from app.models.units import human
from app.storage.settings import Settings
from app.ui.model_info import ModelsReport, gather
from app.ui.tasks import BackgroundTask, Report
from app.ui.tier_panel import download_stopped, plain_label, shown_warnings

ASSUMED_BYTES_PER_S = 50e6 / 8
"""For the estimate before a download starts (50 Mbit/s); replaced by the measured speed."""
RUNNING_NOW = ("Running now: the small built-in models (SmolLM2 135M to answer, Whisper tiny "
               "to listen, Piper to speak). You can talk right away; answers stay simple until "
               "a bigger model is here.")


def minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"


def download_entries(entries: list[ModelEntry], endpoint: str | None,
                     cancel: threading.Event, report: Report) -> Path | None:
    """Fetch the entries one after another, reporting (done, total) over all of them."""
    from app.models.download import download

    total = sum(e.expected_size for e in entries)
    before = 0
    last: Path | None = None
    for entry in entries:
        def progress(done: int, _total: int, base: int = before) -> None:
            report((base + done, max(total, base + done)))

        last = download(entry, progress=progress, cancel=cancel,
                        endpoint=endpoint if entry.source == "hf" else None)
        before += entry.expected_size
    return last


class WelcomeDialog(QDialog):
    """GUI thread only; the work runs in BackgroundTasks."""

    def __init__(self, settings: Callable[[], Settings], parent: QWidget | None = None,
                 gather_now: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self.setWindowTitle("Welcome to Hanasu")
        self.setModal(False)
        self.setMinimumWidth(520)
        self.settings = settings
        self._clock = clock
        self._entries: list[ModelEntry] = []
        self._cancel = threading.Event()
        self._task: BackgroundTask[Path | None] | None = None
        self._started_at = 0.0
        self._started_bytes = 0
        layout = QVBoxLayout(self)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)  # see _fit_height
        layout.setContentsMargins(22, 18, 22, 18)
        layout.setSpacing(10)
        title = QLabel("Welcome to Hanasu")
        title.setObjectName("title")
        layout.addWidget(title)
        layout.addWidget(plain_label(RUNNING_NOW))
        self.recommendation = plain_label("Looking at this machine…")
        layout.addWidget(self.recommendation)
        self.detail = plain_label("", "subtitle")
        layout.addWidget(self.detail)
        self.warnings = plain_label("", "subtitle")  # a fix to copy: selectable
        self.warnings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warnings.hide()
        layout.addWidget(self.warnings)
        self.progress = QProgressBar()
        self.progress.setFixedHeight(6)
        self.progress.setRange(0, 1000)
        self.progress.hide()
        layout.addWidget(self.progress)
        self.status = plain_label("", "subtitle")
        layout.addWidget(self.status)
        layout.addStretch(1)  # any spare height goes below the text, not between paragraphs
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.later_button = QPushButton("Not now")
        self.later_button.clicked.connect(self.close)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.hide()
        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("primary")
        self.download_button.clicked.connect(self.start)
        self.download_button.hide()
        for button in (self.later_button, self.stop_button, self.download_button):
            buttons.addWidget(button)
        layout.addLayout(buttons)
        self.resize(560, 0)
        self._fit_height()
        if gather_now:
            task: BackgroundTask[ModelsReport] = BackgroundTask(gather, "welcome-status", self)
            task.finished.connect(self.show_report)
            task.failed.connect(lambda e: self.recommendation.setText(
                f"Could not look at this machine: {e}"))
            task.start()

    def show_report(self, report: ModelsReport) -> None:
        advice, catalog = report.advice, report.catalog
        if advice is None or catalog is None:
            self.recommendation.setText("No recommendation for this machine.")
            return
        rec = advice.recommendation
        self._entries = [e for e in catalog.tier_entries(rec.tier)
                         if e.downloadable and f"{e.role}.{e.variant}" not in advice.present]
        self.recommendation.setText(f"Recommended for this machine: {rec.reason}")
        if self._entries:
            size = sum(e.expected_size for e in self._entries)
            names = ", ".join(e.title for e in self._entries)
            self.detail.setText(f"To download: {names} — {human(size)}, about "
                                f"{minutes(size / ASSUMED_BYTES_PER_S)} at 50 Mbit/s.")
            self.download_button.setText(f"Download {human(size)}")
            self.download_button.show()
        else:
            bigger = next((why for name, why in reversed(rec.passed_over)  # the smallest
                           if name.startswith("cpu-")), None)
            self.detail.setText("Everything it needs is already here." + (
                f" A bigger model would not answer quickly here ({bigger})." if bigger else ""))
            self.later_button.setText("Start talking")
        self.warnings.setText(shown_warnings(rec.warnings))
        self.warnings.setVisible(bool(rec.warnings))
        self._fit_height()

    def _fit_height(self) -> None:
        """As tall as the wrapped text needs at the narrowest width, so it never clips and
        never leaves gaps (the layout alone sizes wrapped labels for a narrower page)."""
        layout = self.layout()
        if layout is None:
            return
        self.setMinimumHeight(layout.totalHeightForWidth(self.minimumWidth()))
        self.resize(self.width(), layout.totalHeightForWidth(self.width()))

    @property
    def downloading(self) -> bool:
        return self._task is not None and not self._task.done

    def start(self) -> None:
        if self.downloading or not self._entries:
            return
        try:
            endpoint = hub_endpoint(self.settings().model_endpoint)
        except ModelError as exc:
            self.status.setText(str(exc))
            return
        self._cancel = threading.Event()
        cancel, entries = self._cancel, list(self._entries)
        task: BackgroundTask[Path | None] = BackgroundTask(
            lambda report: download_entries(entries, endpoint, cancel, report),
            "welcome-download", self)
        task.progress.connect(self._progress)
        task.finished.connect(self._finished)
        task.failed.connect(lambda e: self._ended(
            download_stopped(str(e), endpoint, "in Models"), done=False))
        self._task = task
        self._started_at, self._started_bytes = self._clock(), -1
        self.download_button.hide()
        self.stop_button.show()
        self.progress.show()
        self.status.setText("Starting download… (you can keep talking)")
        self._fit_height()  # the progress bar and its line are shown now
        task.start()

    def stop(self) -> None:
        self._cancel.set()
        self.status.setText("Stopping… (what is downloaded is kept)")

    def _progress(self, item: object) -> None:
        if not (isinstance(item, tuple) and len(item) == 2):
            return
        done, total = int(item[0]), int(item[1])
        now = self._clock()
        if self._started_bytes < 0:  # a resumed download starts from its .part files
            self._started_at, self._started_bytes = now, done
        if total > 0:
            self.progress.setValue(int(1000 * done / total))
        text = f"{human(done)} of {human(total)}"
        elapsed = now - self._started_at
        fetched = done - self._started_bytes
        if elapsed > 1.0 and fetched > 0:
            rate = fetched / elapsed
            text += f" · {human(int(rate))}/s · about {minutes((total - done) / rate)} left"
        self.status.setText(text)

    def _finished(self, _path: object) -> None:
        self._entries = []
        self._ended("Downloaded. Restart the engines to use it (Settings → Save).", done=True)

    def _ended(self, message: str, done: bool) -> None:
        self.progress.setVisible(not done and self.progress.value() > 0)
        self.stop_button.hide()
        self.download_button.setVisible(not done)
        self.download_button.setText("Resume download")
        self.status.setText(message)
        self.later_button.setText("Close" if done else "Not now")
        self._fit_height()


def should_welcome(settings: Settings, had_settings_file: bool) -> bool:
    """Only the very first launch: no settings file yet (earlier users have one)."""
    return not settings.welcomed and not had_settings_file

