"""``run_app``: show the window first, then load engines in the background.

The window must be on screen in well under 1.5 s, so nothing slow happens before
``show()``: personas and settings are small files; engines, the pipeline and the audio
devices come up in a BackgroundTask afterwards, with progress in the window.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

from PySide6.QtCore import QEvent, QObject, QSocketNotifier, QTimer
from PySide6.QtWidgets import QApplication

from app.core.events import AssistantState
from app.personas.loader import load_persona_library
from app.storage.database import open_database
from app.storage.keeper import Keeper
from app.storage.settings import (
    Settings,
    load_settings_with_notice,
    save_settings,
    settings_path,
)
from app.ui.gc_freeze import freeze_startup_objects
from app.ui.gui_collector import GuiThreadCollector
from app.ui.notices import Notice
from app.ui.serial_paint import paint_serially
from app.ui.session import Session
from app.ui.single_instance import SingleInstance, raise_window
from app.ui.theme import apply_theme
from app.ui.tray import create_tray
from app.ui.window import MainWindow

log = logging.getLogger(__name__)

BUSY_STATES = (AssistantState.LISTENING, AssistantState.THINKING, AssistantState.SPEAKING)
"""States during a turn: the heartbeat's busy span, for the "during turns" UI stall."""


def _exit_when_ready() -> bool:
    """``HANASU_EXIT_WHEN_READY=1``: quit once engines are up (startup timing, smoke tests)."""
    return os.environ.get("HANASU_EXIT_WHEN_READY") == "1"


def create_window() -> MainWindow:
    """Personas, settings and the window; what went wrong reading the user's files (a
    skipped persona, a reset settings file) is shown in the window's notice area."""
    library = load_persona_library()
    for problem in library.problems:
        log.warning("persona problem: %s", problem)
    settings, settings_notice = load_settings_with_notice()
    keeper = open_keeper()
    window = MainWindow(library, settings, save_settings=save_settings, keeper=keeper.keeper)
    keeper.window = window
    if settings_notice:
        window.add_notice(settings_notice)
    if keeper.opened.notice:  # a damaged database moved aside, a newer one left alone
        window.add_notice(keeper.opened.notice)
    return window


class _WindowKeeper:
    """The conversation store, with one-line problems (a full disk) posted to the window's
    notice area from the writer thread, once the window exists."""

    def __init__(self) -> None:
        self.opened = open_database()
        self.window: MainWindow | None = None
        self.keeper = Keeper(self.opened, notify=self._notify)

    def _notify(self, message: str) -> None:
        log.warning("%s", message)
        if self.window is not None:
            self.window.bridge.post(Notice(message))


def open_keeper() -> _WindowKeeper:
    return _WindowKeeper()


def run_app(fake_engines: bool = False) -> int:
    started = time.perf_counter()
    paint_serially()  # before QApplication: Qt's paint thread pool stalls the GUI thread
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("Hanasu")
    app.setApplicationDisplayName("Hanasu")
    instance = SingleInstance(parent=app)
    if not instance.claim():  # the running app was asked to show its window
        print("hanasu: already running for this user and data folder; showing its window",
              file=sys.stderr)
        return 0
    apply_theme(app)
    collector = GuiThreadCollector(app)  # Qt objects in cycles die on the GUI thread only
    had_settings = settings_path().exists()  # none yet: the very first launch
    window = create_window()
    instance.activated.connect(lambda: raise_window(window))
    session = Session(window.bridge.post, fake=fake_engines, parent=window)
    session.keeper = window.conversations.keeper if window.conversations else None
    window.timers.desk = lambda: session.running.tools if session.running else None
    window.alerts.questions.desk = lambda: session.running.tools if session.running else None
    session.mcp.save = window.bridge.post  # a changed tick: stored on the GUI thread
    tray = create_tray(window)
    window.pet.show_initial()  # the full window, or the desktop pet it was left as
    visible_ms = (time.perf_counter() - started) * 1000
    shown_at = time.time()
    from app.ui.dialogs import DialogLauncher  # the model catalog is not needed before show

    DialogLauncher(window, session, restart=lambda s: _start(window, session, s))
    if not _exit_when_ready():
        _welcome(window, had_settings)
    log.info("window visible %.0f ms after run_app", visible_ms)
    timings = {"visible_ms": visible_ms}

    # Wall-clock (time.time) moments, comparable with the clock of the process that
    # launched us: `hanasu bench --ui` measures from before its Popen to these.
    epoch = {"shown": shown_at}
    first_paint = _FirstPaint(window, epoch)
    window.pet.shown_widget().installEventFilter(first_paint)
    window.bridge.state_changed.connect(lambda state: window.stall.set_busy(state in BUSY_STATES))

    def ready(pipeline: object) -> None:
        timings["ready_ms"] = (time.perf_counter() - started) * 1000
        epoch["ready"] = time.time()
        freeze_startup_objects()  # full collections then skip start-up's objects
        window.stall.mark()
        log.info("engines ready %.0f ms after run_app", timings["ready_ms"])
        if _exit_when_ready():
            QTimer.singleShot(300, app.quit)

    def failed(message: str) -> None:
        log.warning("engines failed: %s", message)
        if _exit_when_ready():
            QTimer.singleShot(300, app.quit)

    window.persona_changed.connect(lambda persona: session.use_persona(persona))
    session.progress.connect(window.show_progress)
    session.ready.connect(lambda pipeline: window.attach_pipeline(pipeline, session.persona_id))
    session.ready.connect(ready)
    session.failed.connect(window.show_load_error)
    session.failed.connect(failed)
    window.retry_requested.connect(lambda: _start(window, session, window.settings))
    QTimer.singleShot(0, lambda: _start(window, session, window.settings))
    app.aboutToQuit.connect(lambda: _shutdown(window, session))
    restore_signals = _quit_on_signals(app)
    try:
        code = app.exec()
    finally:
        restore_signals()
        instance.release()
        collector.stop()
    if tray is not None:
        tray.hide()
    stall = window.stall
    stalls = (f"max UI stall {stall.max_stall_ms:.1f} ms (after engines ready "
              f"{stall.max_since_mark_ms:.1f} ms; during turns {stall.max_busy_stall_ms:.1f} ms "
              f"over {stall.busy_spans} turns)")
    moments = "; ".join(f"{name} {value:.3f}" for name, value in epoch.items())
    log.info("%s; unix times: %s; longest gc collection %.1f ms (%d)", stalls, moments,
             collector.longest_ms, collector.collections)
    if _exit_when_ready():
        print(f"hanasu: window visible after {timings['visible_ms']:.0f} ms; engines ready "
              f"after {timings.get('ready_ms', float('nan')):.0f} ms; max UI stall "
              f"{window.max_ui_stall_ms:.1f} ms", file=sys.stderr)
        print(f"hanasu: {stalls}; unix times: {moments}", file=sys.stderr)
    return int(code)


class _FirstPaint(QObject):
    """Records ``time.time()`` of the window's first paint as ``epoch["painted"]``: the
    moment its pixels exist, a little after ``show()`` returned."""

    def __init__(self, window: QObject, epoch: dict[str, float]) -> None:
        super().__init__(window)
        self._epoch = epoch

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and "painted" not in self._epoch:
            self._epoch["painted"] = time.time()
            log.info("window first painted at unix time %.3f", self._epoch["painted"])
            watched.removeEventFilter(self)
        return False


def _quit_on_signals(app: QApplication) -> Callable[[], None]:
    """SIGTERM / SIGINT (Ctrl-C) quit the app normally, so ``aboutToQuit`` stops the
    pipeline and closes the audio devices; a second signal kills the process at once.

    Python runs signal handlers only when the interpreter gets control, and Qt's event
    loop is C++. Rather than a timer waking the interpreter a few times a second (five
    needless wake-ups a second while idle), Python's C handler writes each signal to a
    socket (``signal.set_wakeup_fd``) that a ``QSocketNotifier`` watches: the loop wakes
    only when a signal came, and the slot returning to Python runs the handler. Returns a
    function that puts the previous handlers back.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # signal.signal only works on the main thread
    signals = (signal.SIGTERM, signal.SIGINT)
    previous = {sig: signal.getsignal(sig) for sig in signals}

    def handle(signum: int, _frame: FrameType | None) -> None:
        log.info("%s received: quitting", signal.Signals(signum).name)
        for sig in signals:
            signal.signal(sig, signal.SIG_DFL)  # a second signal must not wait for us
        QTimer.singleShot(0, app.quit)  # queued: also right if the loop has not started

    for sig in signals:
        signal.signal(sig, handle)
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read, app)

    def woken() -> None:  # back in Python: the handler has run; empty the socket
        try:
            while reader.recv(64):
                pass
        except (BlockingIOError, OSError):
            pass

    notifier.activated.connect(woken)

    def restore() -> None:
        notifier.setEnabled(False)
        notifier.deleteLater()
        signal.set_wakeup_fd(previous_fd)
        reader.close()
        writer.close()
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)

    return restore


def _welcome(window: MainWindow, had_settings: bool) -> None:
    """The first-run page, beside the window (never modal: talking works meanwhile)."""
    from app.ui.first_run import WelcomeDialog, should_welcome

    if not should_welcome(window.settings, had_settings):
        return
    window.store_settings(window.settings.replace(welcomed=True))
    WelcomeDialog(lambda: window.settings, window).show()


def _start(window: MainWindow, session: Session, settings: Settings) -> None:
    window.settings = settings
    window.detach_pipeline()
    window.show_progress("Starting the voice engines…")
    session.start(settings, window.persona)


def _shutdown(window: MainWindow, session: Session) -> None:
    window.shutdown()
    session.shutdown()
    if window.conversations is not None:  # after the pipeline: its last commit is queued
        window.conversations.keeper.close()
