"""Keeps alsa-lib's own messages off the console.

alsa-lib prints to stderr whatever it thinks worth saying: "underrun occurred" when an
output stream starts late, "cannot find card" for every device PortAudio probes. To a user
who launched Hanasu from a terminal that is noise on every launch; the app counts
underruns itself (``DeviceCounters``) and reports real device problems in the window.
``quiet_alsa()`` replaces alsa-lib's error handler with one that only counts the
messages, before PortAudio is loaded. Where there is no alsa-lib (macOS, Windows) it
does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

_Handler = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                            ctypes.c_int, ctypes.c_char_p)
"""alsa-lib's ``snd_lib_error_handler_t`` (its variadic tail is not read)."""


class _Quiet:
    messages = 0
    handler: object | None = None
    """The installed callback, kept alive for as long as alsa-lib may call it."""


def _count(_file: bytes | None, _line: int, _function: bytes | None, _err: int,
           _fmt: bytes | None) -> None:
    _Quiet.messages += 1  # may run on PortAudio's audio thread: nothing more


def quiet_alsa() -> bool:
    """Install the counting handler (once); False where alsa-lib is not found."""
    if _Quiet.handler is not None:
        return True
    name = ctypes.util.find_library("asound")
    if name is None:
        return False
    try:
        library = ctypes.CDLL(name)
        handler = _Handler(_count)
        library.snd_lib_error_set_handler(handler)
    except (OSError, AttributeError) as exc:
        log.debug("alsa-lib messages stay on the console: %s", exc)
        return False
    _Quiet.handler = handler
    return True


def alsa_messages() -> int:
    """How many messages alsa-lib sent since ``quiet_alsa()`` (for the log at exit)."""
    return _Quiet.messages
