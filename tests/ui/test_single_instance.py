"""One desktop app per user and data folder: a second launch raises the first window, exits 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.ui.single_instance import InstanceNames, SingleInstance, instance_names, raise_window
from app.ui.window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def names() -> Iterator[InstanceNames]:
    """A short folder of its own: a Unix socket path must stay under ~100 characters."""
    with tempfile.TemporaryDirectory(prefix="hs-") as folder:
        yield InstanceNames(Path(folder) / "t.lock", str(Path(folder) / "t.sock"))


def test_second_instance_raises_the_first(qtbot: QtBot, names: InstanceNames) -> None:
    first = SingleInstance(names)
    assert first.claim()
    second = SingleInstance(names)
    with qtbot.waitSignal(first.activated, timeout=3000):
        assert not second.claim()
    first.release()
    third = SingleInstance(names)  # the first one gone: the next launch runs
    assert third.claim()
    third.release()


def test_raise_shows_a_hidden_or_minimized_window(qtbot: QtBot, window: MainWindow,
                                                  names: InstanceNames) -> None:
    first = SingleInstance(names)
    assert first.claim()
    first.activated.connect(lambda: raise_window(window))
    window.showMinimized()
    window.hide()  # "Hide" from the tray
    assert not SingleInstance(names).claim()
    qtbot.waitUntil(window.isVisible, timeout=3000)
    assert not window.windowState() & Qt.WindowState.WindowMinimized
    first.release()


def test_stale_lock_and_socket_of_a_killed_instance_do_not_block(names: InstanceNames) -> None:
    code = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from PySide6.QtCore import QCoreApplication\n"
        "from app.ui.single_instance import InstanceNames, SingleInstance\n"
        "app = QCoreApplication([])\n"
        f"names = InstanceNames(Path({str(names.lock)!r}), {names.server!r})\n"
        "instance = SingleInstance(names)\n"
        "assert instance.claim()\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert names.lock.exists() and Path(names.server).exists()  # what a kill -9 leaves
    instance = SingleInstance(names)
    started = time.monotonic()
    assert instance.claim()
    assert time.monotonic() - started < 2.0
    assert not SingleInstance(names).claim()  # and it listens: a later launch raises it
    instance.release()


def test_second_launch_of_the_app_exits_0_and_raises_the_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HANASU_NO_AUDIO": "1",
           "HANASU_CONFIG_DIR": str(tmp_path / "c"), "HANASU_DATA_DIR": str(tmp_path / "d"),
           "HANASU_LOG_DIR": str(tmp_path / "l")}
    monkeypatch.setenv("HANASU_DATA_DIR", env["HANASU_DATA_DIR"])
    socket = Path(instance_names().server)
    first = subprocess.Popen([sys.executable, "-m", "app", "--fake-engines"], cwd=ROOT,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + 60
        while not socket.exists():  # a subprocess has no signal to wait on
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first app never listened"
            time.sleep(0.1)
        second = subprocess.run([sys.executable, "-m", "app", "--fake-engines"], cwd=ROOT,
                                env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 0, second.stderr
        assert "already running" in second.stderr
        log = tmp_path / "l" / "hanasu.log"
        deadline = time.monotonic() + 10
        while "a second launch asked for the window" not in log.read_text("utf-8"):
            assert time.monotonic() < deadline, log.read_text("utf-8")
            time.sleep(0.1)
        assert first.poll() is None  # the first app still runs
    finally:
        first.send_signal(signal.SIGTERM)
        _out, err = first.communicate(timeout=30)
    assert first.returncode == 0, err
    assert not socket.exists()  # closed cleanly: nothing left behind


def test_hanasu_run_keeps_its_own_conversation_while_the_app_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np
    import soundfile

    from app.storage.database import open_database
    from app.storage.keeper import Keeper
    from tests.ui.conftest import RATE, utterance

    data = tmp_path / "d"
    env = {**os.environ, "HANASU_CONFIG_DIR": str(tmp_path / "c"),
           "HANASU_DATA_DIR": str(data), "HANASU_LOG_DIR": str(tmp_path / "l")}
    monkeypatch.setenv("HANASU_DATA_DIR", str(data))
    wav = tmp_path / "q.wav"
    soundfile.write(wav, np.concatenate(utterance()), RATE)
    command = [sys.executable, "-m", "app", "run", "--fake-engines", "--input", str(wav),
               "--output", str(tmp_path / "o.wav")]

    def saved() -> int:
        keeper = Keeper(open_database(data / "hanasu.db"))
        try:
            return len(keeper.history.conversations(None))
        finally:
            keeper.close()

    app = SingleInstance(instance_names())  # the desktop app, as it holds this data folder
    assert app.claim()
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)
    finally:
        app.release()
    assert done.returncode == 0, done.stderr
    assert "the desktop app is running with this data folder" in done.stderr
    assert saved() == 0  # the app's conversation was neither resumed nor written
    alone = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=120)
    assert alone.returncode == 0, alone.stderr
    assert "desktop app is running" not in alone.stderr
    assert saved() == 1  # without the app, run continues and saves the conversation
