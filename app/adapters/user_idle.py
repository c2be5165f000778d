"""How long since the user last touched keyboard or mouse, from the system itself.

A check-in that welcomes the user back needs to know they were away and are back; the
microphone cannot tell (a quiet room is not an empty one). Each system says it its own
way, read here through ctypes with no extra package:

- X11 (and XWayland apps on some compositors): the MIT-SCREEN-SAVER extension's idle time
  (libXss), on a display connection of its own, used by one thread only;
- Windows: ``GetLastInputInfo``;
- macOS: CoreGraphics' seconds since the last input event.

Where none answers (a Wayland session without XWayland idle, a headless machine), the
reader is None and the app says so once: the welcome back is simply not offered.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)

IdleReader = Callable[[], float]
"""Seconds since the last keyboard or mouse input."""


class _XScreenSaverInfo(ctypes.Structure):
    _fields_ = [("window", ctypes.c_ulong), ("state", ctypes.c_int),
                ("kind", ctypes.c_int), ("til_or_since", ctypes.c_ulong),
                ("idle", ctypes.c_ulong), ("eventMask", ctypes.c_ulong)]


@functools.cache
def _x11_reader(display_name: str) -> IdleReader | None:
    """One connection per display for the app's life (a session rebuilt on an engine
    restart asks again: it gets the same one, not another connection)."""
    x11_path, xss_path = ctypes.util.find_library("X11"), ctypes.util.find_library("Xss")
    if not x11_path or not xss_path:
        return None
    x11, xss = ctypes.CDLL(x11_path), ctypes.CDLL(xss_path)
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    xss.XScreenSaverQueryExtension.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
    xss.XScreenSaverAllocInfo.restype = ctypes.POINTER(_XScreenSaverInfo)
    xss.XScreenSaverQueryInfo.argtypes = [ctypes.c_void_p, ctypes.c_ulong,
                                          ctypes.POINTER(_XScreenSaverInfo)]
    display = x11.XOpenDisplay(display_name.encode())
    if not display:
        return None
    event, error = ctypes.c_int(), ctypes.c_int()
    if not xss.XScreenSaverQueryExtension(display, ctypes.byref(event), ctypes.byref(error)):
        return None
    root, info = x11.XDefaultRootWindow(display), xss.XScreenSaverAllocInfo()

    def idle() -> float:
        if not xss.XScreenSaverQueryInfo(display, root, info):
            raise OSError("XScreenSaverQueryInfo failed")
        return float(info.contents.idle) / 1000.0

    return idle


def _windows_reader() -> IdleReader:
    class LastInput(ctypes.Structure):
        _fields_ = [("cbSize", ctypes.c_uint), ("dwTime", ctypes.c_uint)]

    windll = ctypes.windll  # type: ignore[attr-defined]  # Windows only

    def idle() -> float:
        last = LastInput(ctypes.sizeof(LastInput), 0)
        if not windll.user32.GetLastInputInfo(ctypes.byref(last)):
            raise OSError("GetLastInputInfo failed")
        return float((windll.kernel32.GetTickCount() - last.dwTime) & 0xFFFFFFFF) / 1000.0

    return idle


def _mac_reader() -> IdleReader | None:
    path = ctypes.util.find_library("CoreGraphics") or ctypes.util.find_library(
        "ApplicationServices")
    if not path:
        return None
    graphics = ctypes.CDLL(path)
    since = graphics.CGEventSourceSecondsSinceLastEventType
    since.restype, since.argtypes = ctypes.c_double, [ctypes.c_int, ctypes.c_uint32]
    combined_session, any_input = 0, 0xFFFFFFFF
    return lambda: float(since(combined_session, any_input))


def idle_reader() -> IdleReader | None:
    """This system's reader, or None where it cannot tell (said once in the log)."""
    try:
        if sys.platform == "win32":
            return _windows_reader()
        if sys.platform == "darwin":
            reader = _mac_reader()
        elif os.environ.get("DISPLAY"):
            reader = _x11_reader(os.environ["DISPLAY"])
        else:
            reader = None
    except OSError as exc:
        log.info("the time since the last input is not available: %s", exc)
        return None
    if reader is None:
        log.info("the time since the last input is not available here (Wayland without "
                 "XWayland idle, or no display): no welcome back on return")
    return reader
