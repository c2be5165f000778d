"""Is there a screen to open the window on? Asked before Qt is loaded: without one, Qt
aborts the process ("could not connect to display", a core dump), which told a user in an
SSH session or on a server nothing about what to do instead."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

HEADLESS_HINT = (
    "no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set). "
    "Hanasu is a desktop app: start it from a graphical session, or try the voice loop on "
    "files: hanasu run --input question.wav --output reply.wav"
)


def missing_display(
    environ: Mapping[str, str] | None = None, platform: str | None = None
) -> str | None:
    """Why the window cannot open, or None. Only Linux and the BSDs need an X or Wayland
    server; an explicit ``QT_QPA_PLATFORM`` (offscreen, vnc, eglfs...) is the user's choice."""
    env = os.environ if environ is None else environ
    system = sys.platform if platform is None else platform
    if not system.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return None
    if env.get("QT_QPA_PLATFORM") or env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return HEADLESS_HINT
