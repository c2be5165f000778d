"""Downloads run in a thread with progress and cancel; the dialog never blocks the app."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.gpu import Gpu
from app.models.catalog import ModelEntry, load_catalog
from app.models.errors import DownloadCancelled
from app.ui import models_dialog
from app.ui.model_info import ModelsReport, RoleInfo, fits_gpu
from app.ui.models_dialog import ModelsDialog
from app.ui.tasks import Report


def _llm() -> ModelEntry:
    return load_catalog().downloadable("llm")[0]


def test_download_progress_and_cancel(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    halfway = threading.Event()

    def fake_download(entry: ModelEntry, cancel: threading.Event, report: Report,
                      endpoint: str | None = None) -> Path:
        report((50, 100))
        halfway.set()
        cancel.wait(10)
        raise DownloadCancelled("download cancelled; the partial file is kept")

    monkeypatch.setattr(models_dialog, "_download", fake_download)
    dialog = ModelsDialog(gather_now=False)
    qtbot.addWidget(dialog)
    dialog.show_report(ModelsReport([RoleInfo("llm", "embedded · 400 MB", _llm(), "missing")],
                                    gpu=None))
    dialog.show()
    row = dialog.rows[0]
    row.download_button.click()
    qtbot.waitUntil(lambda: row.progress.value() == 500, timeout=5_000)
    assert row.cancel_button.isVisible() and row.downloading
    row.cancel_button.click()
    qtbot.waitUntil(lambda: not row.downloading, timeout=5_000)
    assert "cancelled" in row.state.text()
    assert row.download_button.isVisible() and row.download_button.text() == "Resume download"


def test_gpu_fit_sentence() -> None:
    entry = _llm()
    assert "No GPU" in fits_gpu(entry, None)
    assert fits_gpu(entry, Gpu("Big GPU", 200 * 2**30)).startswith("Fits in Big GPU (200 GB;")
    assert fits_gpu(entry, Gpu("Tiny GPU", 2**30)).startswith("Does not fit in Tiny GPU (1 GB;")
    assert "on the CPU" in fits_gpu(entry, Gpu("Tiny GPU", 2**30), placement="cpu")
