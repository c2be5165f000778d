"""Load a Live2D model once in a child process before the app loads it itself.

live2d-py's native loader does not raise on a damaged model: given a ``.moc3`` with a
valid signature and garbage after it, live2d-py 1.0.0 ends the whole process
(``std::bad_alloc`` then abort, or a segfault; see docs/personas.md). The file checks
(``live2d_model``) stop what can be told from outside, but only Cubism Core can tell a
good ``.moc3`` from a bad one, so each model is loaded first by ``python -m
app.ui.live2d_probe MODEL`` with an OpenGL context of its own; only a model the child
loaded and updated is drawn in the app, and a child that crashed or hung is one notice.
``Live2DProbe`` runs the child with QProcess, so the GUI thread never waits for it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

import app

MARK = "hanasu-live2d-loaded"
"""The child's line when the model loaded (live2d-py prints its own lines too)."""
PROBE_LIMIT_MS = 30_000


class Live2DProbe(QObject):
    """Loads ``path`` in a child process; ``finished`` carries "" when it loaded, else one
    line saying why not."""

    finished = Signal(str)

    def __init__(self, path: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.problem: str | None = None
        """None while it runs; "" when the model loaded."""
        self._process = QProcess(self)
        self._process.setProgram(sys.executable)
        self._process.setArguments(["-m", "app.ui.live2d_probe", str(path)])
        env = QProcessEnvironment.systemEnvironment()
        root = str(Path(app.__file__).resolve().parents[1])  # this checkout's app package
        env.insert("PYTHONPATH", os.pathsep.join(p for p in (root, env.value("PYTHONPATH")) if p))
        self._process.setProcessEnvironment(env)
        self._process.finished.connect(self._done)
        self._process.errorOccurred.connect(self._error)
        self._limit = QTimer(self)
        self._limit.setSingleShot(True)
        self._limit.setInterval(PROBE_LIMIT_MS)
        self._limit.timeout.connect(self._too_long)

    def start(self) -> None:
        if getattr(sys, "frozen", False):  # the packaged app has no interpreter to run it
            self._finish("the packaged app cannot load Live2D models")
            return
        self._limit.start()
        self._process.start()

    def _done(self, code: int, status: QProcess.ExitStatus) -> None:
        out = bytes(self._process.readAllStandardOutput().data()).decode("utf-8", "replace")
        err = bytes(self._process.readAllStandardError().data()).decode("utf-8", "replace")
        lines = [line.strip() for line in out.splitlines()]  # its C logs may come last
        if status is QProcess.ExitStatus.NormalExit and code == 0 and MARK in lines:
            self._finish("")
        elif status is QProcess.ExitStatus.CrashExit:
            self._finish("live2d-py crashed while loading it (a damaged or unsupported model)")
        else:
            last = next((line for line in reversed(err.strip().splitlines()) if line.strip()),
                        f"exit code {code}")
            self._finish(f"live2d-py could not load it ({last.strip()[:200]})")

    def _error(self, error: QProcess.ProcessError) -> None:
        if error is QProcess.ProcessError.FailedToStart:
            self._finish(f"the loader could not start ({self._process.errorString()})")

    def _too_long(self) -> None:
        self._process.kill()
        self._finish(f"loading it took over {PROBE_LIMIT_MS // 1000} s")

    def _finish(self, problem: str) -> None:
        if self.problem is None:
            self.problem = problem
            self._limit.stop()
            self.finished.emit(problem)


def main(argv: list[str]) -> int:
    """The child: load the model in an offscreen OpenGL context; print MARK when it did."""
    from PySide6.QtGui import QGuiApplication, QOffscreenSurface, QOpenGLContext

    from app.ui.live2d_runtime import find_live2d

    if len(argv) != 2:
        print("usage: python -m app.ui.live2d_probe MODEL.model3.json", file=sys.stderr)
        return 2
    found = find_live2d()
    if isinstance(found, str):
        print(found, file=sys.stderr)
        return 3
    application = QGuiApplication(argv[:1])
    context, surface = QOpenGLContext(), QOffscreenSurface()
    surface.create()
    if not context.create() or not context.makeCurrent(surface):
        print("no OpenGL context could be made", file=sys.stderr)
        return 4
    found.glInit()
    model = found.Model()
    model.LoadModelJson(argv[1])
    model.Resize(64, 64)
    model.Update()
    context.doneCurrent()
    del application
    print(MARK, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
