"""Whether the window's persona is drawn as its Live2D model, and the views that draw it.

A persona's ``[avatar.live2d]`` model is shown only when all of these hold: it passes
the file checks (``live2d_model``), the optional ``live2d-py`` package imports, the user
accepted the Cubism licence terms (asked once, after the window is up; the answer is
kept in the settings), and the native code loads it in an OpenGL context. Otherwise the
avatar shows what it would have without the model (layers, picture or drawn face) and
the notice area says why, once. The app loads a model only after a child process has
loaded it without dying (``live2d_probe``: live2d-py aborts on a damaged ``.moc3``); the
avatar's own look shows meanwhile. When it is shown, a ``Live2DView`` lies over each avatar
widget that hosts it (the window's and the desktop pet's) and reads that widget's pose
each frame, so both follow the same mouth, blinks, state and feelings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QOpenGLContext
from PySide6.QtWidgets import QWidget

from app.personas.avatar_layers import AvatarFileError
from app.personas.live2d_model import Live2DModelInfo, check_live2d
from app.personas.model import Persona
from app.ui.layered_avatar import dress_avatar
from app.ui.live2d_probe import Live2DProbe
from app.ui.live2d_runtime import Live2DLibrary, find_live2d
from app.ui.live2d_terms import ask_terms

if TYPE_CHECKING:
    from app.ui.avatar import AvatarWidget
    from app.ui.live2d_view import Live2DView
    from app.ui.window import MainWindow

log = logging.getLogger(__name__)

FindLive2D = Callable[[], Live2DLibrary | str]
AskTerms = Callable[[QWidget], bool]
DECLINED = "the Live2D licence terms were declined (Settings, Live2D models: ask again)"


def opengl_problem() -> str | None:
    """Why no OpenGL context can be made here (the offscreen platform, a missing driver),
    or None when one can."""
    if QOpenGLContext().create():
        return None
    return "OpenGL is not available on this display"


class Live2DStage:
    """The window's persona's look, Live2D model included, on every avatar it hosts."""

    def __init__(self, window: MainWindow, find: FindLive2D | None = None,
                 ask: AskTerms | None = None) -> None:
        self._window = window
        self._find, self._ask = find or find_live2d, ask or ask_terms
        self._library: Live2DLibrary | None = None
        self._persona: Persona | None = None
        self._asking = False
        self._failed: set[Path] = set()
        """Models the native code refused this session: not tried again."""
        self._loaded: set[tuple[Path, int]] = set()
        """Models a child process loaded this session (path, size)."""
        self._wanted: Live2DModelInfo | None = None
        self.probe: Live2DProbe | None = None
        """The last load started (tests wait for it)."""
        self._avatars: list[AvatarWidget] = [window.avatar]
        self.views: dict[AvatarWidget, Live2DView] = {}
        self.model: Live2DModelInfo | None = None
        """The model shown now (None: the avatar's own look)."""

    def dress(self, persona: Persona) -> None:
        """Show ``persona`` on the window's avatar (and the pet's): colours, picture and
        layers as ever, then its Live2D model when it can be shown."""
        problem = dress_avatar(self._window.avatar, self._window.library, persona)
        if problem:  # a layered avatar that could not load: its face instead
            self._window.add_notice(problem)
        self._persona = persona
        self._show(None)
        self._load(self._usable_model(persona))

    def host(self, avatar: AvatarWidget) -> None:
        """Draw the model over ``avatar`` too (the desktop pet's), now and after each
        persona change, until it is destroyed."""
        if avatar in self._avatars:
            return
        self._avatars.append(avatar)
        avatar.destroyed.connect(lambda *_: self._forget(avatar))
        if self.model is not None:
            self._cover(avatar, self.model)

    @property
    def avatars(self) -> tuple[AvatarWidget, ...]:
        """The avatar widgets that show the model when there is one."""
        return tuple(self._avatars)

    def _forget(self, avatar: AvatarWidget) -> None:
        self._avatars = [a for a in self._avatars if a is not avatar]
        self.views.pop(avatar, None)

    def _usable_model(self, persona: Persona) -> Live2DModelInfo | None:
        live2d = persona.avatar.live2d
        folder = self._window.library.folder(persona)
        if live2d is None or folder is None:
            return None
        try:
            info = check_live2d(folder, live2d)
        except AvatarFileError as exc:
            self._fall_back(persona, str(exc))
            return None
        if info.path in self._failed:
            return None  # already said why
        if self._library is None:
            found = self._find()
            if isinstance(found, str):
                self._fall_back(persona, found)
                return None
            self._library = found
        terms = self._window.settings.live2d_terms
        if terms is None:
            if not self._asking:  # asked once the window is up, not while it is built
                self._asking = True
                QTimer.singleShot(0, self._window, self._ask_terms)
            return None
        problem = DECLINED if not terms else opengl_problem()
        if problem is not None:
            self._fall_back(persona, problem)
            return None
        return info

    def _ask_terms(self) -> None:
        accepted = self._ask(self._window)
        self._asking = False
        self._window.store_settings(self._window.settings.replace(live2d_terms=accepted))
        log.info("Live2D licence terms %s", "accepted" if accepted else "declined")
        if self._persona is not None:
            self._load(self._usable_model(self._persona))

    def _load(self, info: Live2DModelInfo | None) -> None:
        """Show ``info`` once a child process has loaded it (``live2d_probe``): a damaged
        model ends the process that loads it, and that must not be the app."""
        self._wanted = info
        if info is None:
            return
        if (info.path, info.total_bytes) in self._loaded:
            self._show(info)
            return
        probe = Live2DProbe(info.path, self._window)
        persona = self._persona
        probe.finished.connect(lambda problem: self._probed(info, problem, persona))
        self.probe = probe
        probe.start()

    def _probed(self, info: Live2DModelInfo, problem: str, persona: Persona | None) -> None:
        if problem:
            self._view_failed(info, problem, persona)
            return
        self._loaded.add((info.path, info.total_bytes))
        if self._wanted is info:
            self._show(info)

    def _fall_back(self, persona: Persona, reason: str) -> None:
        instead = ("layered avatar" if self._window.avatar.layers is not None
                   else "picture" if self._window.avatar.picture is not None
                   else "drawn face")
        self._window.add_notice(f"{persona.name}'s Live2D model is not shown: {reason}. "
                                f"The {instead} is shown instead.")

    def _show(self, info: Live2DModelInfo | None) -> None:
        self.model = info
        for avatar in list(self.views):
            self._uncover(avatar)
        if info is not None:
            for avatar in self._avatars:
                self._cover(avatar, info)

    def _cover(self, avatar: AvatarWidget, info: Live2DModelInfo) -> None:
        from app.ui.live2d_view import Live2DView  # OpenGL widgets only once they are used

        assert self._library is not None
        view = Live2DView(self._library, info, avatar, avatar)
        persona = self._persona
        view.failed.connect(lambda problem: self._view_failed(info, problem, persona))
        self.views[avatar] = view
        avatar.covered = True
        view.show()

    def _uncover(self, avatar: AvatarWidget) -> None:
        view = self.views.pop(avatar, None)
        if view is not None:
            view.hide()
            view.deleteLater()
        avatar.covered = False
        avatar.update()

    def _view_failed(self, info: Live2DModelInfo, problem: str,
                     persona: Persona | None) -> None:
        """The native code refused the model (or there is no OpenGL): the avatar's own
        look everywhere, one notice, and no second try this session."""
        if info.path in self._failed:
            return
        self._failed.add(info.path)
        if self.model is info or self._wanted is info:
            self._wanted = None
            self._show(None)
        if persona is not None:  # the persona whose model it was (another may show now)
            self._fall_back(persona, problem)
