"""The optional ``live2d-py`` package: found at run time, never imported with the app.

``live2d-py`` (MIT) carries Live2D Inc.'s Cubism Core, which is proprietary and under its
own licence, inside its native module; Hanasu never bundles it (the frozen build excludes
it), and a persona's Live2D model is only drawn after the user has read and accepted the
terms below (``live2d_terms``). ``find_live2d`` imports it on first need; a missing
package, a missing OpenGL library or any other failure is one line for the notice area.
The typed surfaces here are the part of its API Hanasu uses (``live2d/_live2d.pyi``).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
from typing import Protocol, cast

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install \"hanasu[live2d]\""
CORE_LICENCE_URL = ("https://www.live2d.com/eula/"
                    "live2d-proprietary-software-license-agreement_en.html")
FRAMEWORK_LICENCE_URL = "https://www.live2d.com/eula/live2d-open-software-license-agreement_en.html"
RELEASE_LICENCE_URL = "https://www.live2d.com/en/sdk/license/"
TERMS = (
    "Live2D models are drawn by the optional live2d-py package. It contains Live2D Cubism "
    "Core, proprietary software of Live2D Inc. licensed under the Live2D Proprietary "
    f"Software License Agreement ({CORE_LICENCE_URL}), and the Cubism Framework, under "
    f"the Live2D Open Software License Agreement ({FRAMEWORK_LICENCE_URL}).\n\n"
    "Hanasu does not include or distribute these components; you installed them yourself. "
    "By choosing Accept you confirm that you have read those agreements and use Cubism "
    "under their terms. Among them: businesses above the revenue threshold Live2D sets "
    f"need a Cubism SDK release licence from Live2D Inc. ({RELEASE_LICENCE_URL}). The "
    "agreements on Live2D's site are what binds, not this summary.\n\n"
    "Decline, and personas with a Live2D model show their picture or drawn face instead."
)


class Live2DModel(Protocol):
    """One loaded model (``live2d.Model``), bound to the OpenGL context it was made in;
    the method names are live2d-py's own."""

    def LoadModelJson(self, path: str) -> None: ...
    def Resize(self, w: int, h: int) -> None: ...
    def Update(self) -> None: ...
    def Draw(self) -> None: ...
    def GetParamIds(self) -> list[str]: ...
    def SetParamById(self, id: str, value: float, weight: float = 1.0) -> None: ...
    def GetExpressions(self) -> list[str]: ...
    def SetExpression(self, expressionId: str) -> None: ...
    def ResetExpression(self) -> None: ...
    def SetAutoBlink(self, on: bool) -> None: ...


class Live2DLibrary(Protocol):
    """The ``live2d`` module."""

    def init(self) -> None: ...
    def glInit(self) -> None: ...
    def clearBuffer(self, r: float, g: float, b: float, a: float) -> None: ...
    def Model(self) -> Live2DModel: ...


def find_live2d() -> Live2DLibrary | str:
    """The ``live2d`` module, initialised, or one line saying why it cannot be used."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it prints a banner on import
            module = importlib.import_module("live2d")
            if hasattr(module, "enableLog"):
                module.enableLog(False)  # its native log lines, on every model load
            library = cast(Live2DLibrary, module)
            library.init()
    except ImportError as exc:
        if getattr(exc, "name", None) == "live2d":
            return f"the optional live2d-py package is not installed ({INSTALL_HINT})"
        return f"live2d-py could not be loaded: {exc}"
    except Exception as exc:  # a broken install or native library: never take the app down
        log.warning("live2d-py failed to start: %r", exc)
        return f"live2d-py could not start: {exc}"
    return library
