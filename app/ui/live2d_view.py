"""Draws a persona's Live2D model with ``live2d-py`` in a QOpenGLWidget laid over the
avatar widget, which keeps doing the timing (mouth, blinks, nods, feelings; see
``live2d_drive``). Imported only once ``live2d_runtime.find_live2d`` found the package.

The model is loaded in ``initializeGL`` (its textures belong to this widget's context),
so a model the native code refuses, or a machine without OpenGL, shows up only there:
the view then emits ``failed`` with one line and draws nothing, and its host falls back
to the drawn face. Mouse input passes through to the avatar (and the pet's gestures).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent, QSurfaceFormat
from PySide6.QtOpenGLWidgets import QOpenGLWidget
from PySide6.QtWidgets import QWidget

from app.personas.live2d_model import Live2DModelInfo
from app.ui.live2d_drive import AvatarFeed, ModelDriver
from app.ui.live2d_runtime import Live2DLibrary

log = logging.getLogger(__name__)

FRAME_MS = 33
START_LIMIT_MS = 3000
"""A view shown this long without an OpenGL context has none (no driver, no display)."""


class Live2DView(QOpenGLWidget):
    failed = Signal(str)
    """The model cannot be drawn here; one line for the user."""

    def __init__(self, library: Live2DLibrary, info: Live2DModelInfo, feed: AvatarFeed,
                 parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("live2dView")
        self._library, self._info, self._feed = library, info, feed
        self.driver: ModelDriver | None = None
        self.frames = 0
        self.problem: str | None = None
        fmt = QSurfaceFormat.defaultFormat()
        fmt.setAlphaBufferSize(8)  # the pet's window is see-through around the model
        self.setFormat(fmt)
        self.setAttribute(Qt.WidgetAttribute.WA_AlwaysStackOnTop)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._timer = QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self.update)
        self._timer.start()
        self.setGeometry(parent.rect())
        parent.installEventFilter(self)  # it covers the avatar at every size
        QTimer.singleShot(START_LIMIT_MS, self, self._check_started)  # not once deleted

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        parent = self.parentWidget()
        if event.type() == QEvent.Type.Resize and parent is not None and watched is parent:
            self.setGeometry(parent.rect())
        return False

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.problem is None:
            self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._timer.stop()  # a model nobody sees needs no frames

    def _check_started(self) -> None:
        if self.driver is None and self.problem is None and self.isVisible():
            self._fail("no OpenGL context could be made for it")

    def _fail(self, problem: str) -> None:
        if self.problem is None:
            self.problem = problem
            self._timer.stop()
            log.warning("Live2D model %s not shown: %s", self._info.path, problem)
            self.failed.emit(problem)

    def initializeGL(self) -> None:
        try:
            self._library.glInit()
            model = self._library.Model()
            model.LoadModelJson(str(self._info.path))
            self.driver = ModelDriver(model)
            ratio = self.devicePixelRatioF()
            model.Resize(round(self.width() * ratio), round(self.height() * ratio))
        except Exception as exc:  # the native loader's refusal, a GL error
            self.driver = None
            self._fail(f"live2d-py could not load it: {exc}")

    def resizeGL(self, w: int, h: int) -> None:
        if self.driver is not None:
            ratio = self.devicePixelRatioF()
            self.driver.model.Resize(round(w * ratio), round(h * ratio))

    def paintGL(self) -> None:
        self._library.clearBuffer(0.0, 0.0, 0.0, 0.0)
        if self.driver is None:
            return
        try:
            self.driver.model.Update()
            self.driver.apply(self._feed.pose(), self._feed.feeling)
            self.driver.model.Draw()
        except Exception as exc:
            self.driver = None
            self._fail(f"live2d-py stopped drawing it: {exc}")
            return
        self.frames += 1
