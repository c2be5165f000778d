"""One desktop app per user and data folder: a second launch raises the first window.

Two full apps on one microphone both answered the same question and saved the exchange
twice. The running app holds a ``QLockFile`` in the per-user runtime folder for its whole
life (Qt sees a lock left by a crashed or ``kill -9``-ed process as stale from its PID and
takes it over) and listens on a ``QLocalServer`` next to it. A second launch that finds
the lock taken sends ``raise`` to that server and exits 0; a socket file left behind by a
crash is removed before listening again.

The name is derived from the data folder, so ``HANASU_DATA_DIR`` (portable installs,
tests) gives each folder its own instance: what must not be shared is the history.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
import os
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import platformdirs
from PySide6.QtCore import QLockFile, QObject, Qt, QTimer, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QWidget

from app.paths import APP_NAME, user_data_dir

log = logging.getLogger(__name__)

RAISE = b"raise\n"
CONNECT_MS = 500
STARTING_WAIT_S = 3.0
"""How long a second launch waits for a first one that holds the lock but is not
listening yet (both launched at once)."""


@dataclass(frozen=True)
class InstanceNames:
    lock: Path
    server: str
    """A socket path (Unix) or a pipe name (Windows)."""


def _runtime_dir() -> Path:
    """The per-user runtime folder (``$XDG_RUNTIME_DIR/hanasu`` on Linux), or a private
    folder in the temp dir where there is none (looked up only then: finding the temp dir
    writes a probe file)."""
    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: platformdirs warns, falls back
        warnings.simplefilter("ignore")
        runtime = platformdirs.user_runtime_path(APP_NAME)
    for folder in (runtime, None):
        if folder is None:
            folder = Path(tempfile.gettempdir()) / f"{APP_NAME}-{_user()}"
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    return Path(tempfile.gettempdir())


def _user() -> str:
    """The user's id, without a passwd lookup (that asks nscd over a socket)."""
    if hasattr(os, "getuid"):
        return str(os.getuid())
    return getpass.getuser()


def instance_names() -> InstanceNames:
    data = str(user_data_dir().expanduser().absolute())
    digest = hashlib.sha256(f"{_user()}\0{data}".encode()).hexdigest()[:12]
    stem = f"{APP_NAME}-{digest}"
    folder = _runtime_dir()
    server = stem if os.name == "nt" else str(folder / f"{stem}.sock")
    return InstanceNames(folder / f"{stem}.lock", server)


def _new_lock(path: Path) -> QLockFile:
    lock = QLockFile(str(path))
    lock.setStaleLockTime(0)  # stale only when its process is gone, never by age
    return lock


def app_running(names: InstanceNames | None = None) -> bool:
    """Whether a desktop app holds this data folder now (for ``hanasu run``)."""
    lock = _new_lock((names or instance_names()).lock)
    if lock.tryLock(0):
        lock.unlock()
        return False
    return lock.error() == QLockFile.LockError.LockFailedError


def ask_running_to_raise(server: str) -> bool:
    """Tell the running app to show its window; False when nobody listens there."""
    socket = QLocalSocket()
    socket.connectToServer(server)
    if not socket.waitForConnected(CONNECT_MS):
        return False
    socket.write(RAISE)
    socket.flush()
    socket.waitForBytesWritten(CONNECT_MS)
    socket.disconnectFromServer()
    return True


class SingleInstance(QObject):
    """``claim()`` once at launch; ``activated`` fires when a later launch asks for us."""

    activated = Signal()

    def __init__(self, names: InstanceNames | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.names = names or instance_names()
        self._lock = _new_lock(self.names.lock)
        self._server: QLocalServer | None = None
        self._sockets: list[QLocalSocket] = []

    def claim(self) -> bool:
        """True: we are the one instance (lock held, listening). False: another one runs
        and was asked to raise its window."""
        deadline = time.monotonic() + STARTING_WAIT_S
        while not self._lock.tryLock(0):
            if self._lock.error() != QLockFile.LockError.LockFailedError:
                log.warning("single-instance lock %s unusable (%s): not enforced",
                            self.names.lock, self._lock.error())
                return True  # an unwritable runtime folder must not stop the app
            if ask_running_to_raise(self.names.server):
                log.info("another Hanasu runs for this data folder: raised its window")
                return False
            if time.monotonic() >= deadline:  # it holds the lock but never listened
                log.warning("another Hanasu holds %s but does not answer", self.names.lock)
                return False
            time.sleep(0.1)
        self._listen()
        return True

    def _listen(self) -> None:
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        QLocalServer.removeServer(self.names.server)  # a socket left by a crash
        if not server.listen(self.names.server):
            log.warning("cannot listen on %s: %s (a second launch will not raise this "
                        "window)", self.names.server, server.errorString())
            return
        server.newConnection.connect(self._accept)
        self._server = server
        log.info("single instance: listening on %s", self.names.server)

    def _accept(self) -> None:
        assert self._server is not None
        while (socket := self._server.nextPendingConnection()) is not None:
            self._sockets.append(socket)
            socket.readyRead.connect(self._read)
            socket.disconnected.connect(self._forget_closed)
        self._read()

    def _read(self) -> None:
        for socket in self._sockets:
            if socket.bytesAvailable() and bytes(socket.readAll().data()).startswith(
                    RAISE.strip()):
                log.info("a second launch asked for the window")
                # after the socket's signal has returned: a slot may close us
                QTimer.singleShot(0, self, self.activated.emit)

    def _forget_closed(self) -> None:
        for socket in [s for s in self._sockets
                       if s.state() == QLocalSocket.LocalSocketState.UnconnectedState]:
            self._sockets.remove(socket)
            socket.deleteLater()

    def release(self) -> None:
        for socket in self._sockets:
            socket.blockSignals(True)
            socket.abort()
            socket.deleteLater()
        self._sockets.clear()
        if self._server is not None:
            self._server.close()
            self._server.deleteLater()
            self._server = None
        self._lock.unlock()


def raise_window(window: QWidget) -> None:
    """Bring the window back for a second launch: shown again if hidden to the tray,
    restored if minimized, raised and given focus (where the window manager allows)."""
    if window.isMinimized():
        window.setWindowState(window.windowState() & ~Qt.WindowState.WindowMinimized)
    window.show()
    window.raise_()
    window.activateWindow()
