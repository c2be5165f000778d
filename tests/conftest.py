"""The whole suite runs with its own user folders.

Tests start `hanasu run`, the app and the stores, which keep settings, personas,
conversations and logs in the user's folders: pointed at a temporary folder for the run,
the suite never reads or writes those of whoever runs it. Tests that want a folder of their
own still set it (monkeypatch or a child's environment).

A test that calls the app's entry point in this process (``app.__main__.main``) also runs
its privacy switch, which sets ``HF_HUB_OFFLINE`` and friends in ``os.environ``; the
environment is put back after every test so one such test cannot switch the hub off for
the download tests that run after it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

FOLDERS = {"HANASU_DATA_DIR": "data", "HANASU_CONFIG_DIR": "config", "HANASU_LOG_DIR": "log"}
_root: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _root
    _root = tempfile.mkdtemp(prefix="hanasu-tests-")
    for variable, folder in FOLDERS.items():
        os.environ[variable] = os.path.join(_root, folder)


@pytest.fixture(autouse=True)
def _environment_restored() -> Iterator[None]:
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _root is not None:
        shutil.rmtree(_root, ignore_errors=True)
