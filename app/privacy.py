"""Nothing leaves the machine: every library's telemetry is switched off before it loads.

Some dependencies phone home on their own. onnxruntime 1.2x/1.3x sends usage events to
``mobile.events.data.microsoft.com`` (a DNS lookup at session creation) and keeps a device
id and an event queue under ``~/.cache/Microsoft/DeveloperTools/.onnxruntime``; only
``ORT_DISABLE_TELEMETRY=1`` in the environment *before the library loads* stops it
(``onnxruntime.disable_telemetry_events()`` does not). huggingface_hub sends usage pings
unless ``HF_HUB_DISABLE_TELEMETRY`` is set, and contacts the hub to check for updates of
cached files unless ``HF_HUB_OFFLINE`` is set.

So this module is imported and applied first, before anything else, by every entry point
(``app/__main__.py`` for ``python -m app`` and the ``hanasu`` script,
``assets/packaging/pyinstaller/launcher.py`` for the frozen app). It only sets environment
variables: they are read by the libraries when they load, and child processes inherit them.
Nothing heavy is imported here.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

TELEMETRY_OFF: dict[str, str] = {
    "ORT_DISABLE_TELEMETRY": "1",  # onnxruntime (VAD, Piper, Kokoro, Smart Turn)
    "HF_HUB_DISABLE_TELEMETRY": "1",  # huggingface_hub (model downloads)
    "DO_NOT_TRACK": "1",  # the cross-tool convention (huggingface_hub honours it too)
}
"""Forced whatever the user's environment says: telemetry is never on."""

OFFLINE: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",  # no hub lookups behind the user's back
}
"""Set unless the user asked for a download (or set the variable themselves)."""


def disable_telemetry(
    allow_downloads: bool = False, environ: MutableMapping[str, str] | None = None
) -> None:
    """Switch library telemetry off and, unless ``allow_downloads``, the model hub too.

    Telemetry switches are forced. ``HF_HUB_OFFLINE`` is only defaulted: a user who set it
    explicitly keeps their value, and a command that downloads (``hanasu models download``,
    the desktop app's model dialog) passes ``allow_downloads=True`` so the hub stays
    reachable when the user asks for it.
    """
    env = os.environ if environ is None else environ
    env.update(TELEMETRY_OFF)
    if not allow_downloads:
        for name, value in OFFLINE.items():
            env.setdefault(name, value)


def downloads_requested(argv: list[str]) -> bool:
    """Whether this command line may download models at the user's request.

    ``hanasu models download ...`` does; so does the desktop app (its model dialog has a
    Download button). ``run``, ``bench``, ``doctor``, ``--self-test`` and
    ``models list|verify`` never download, so the hub is switched off for them.
    """
    words = [a for a in argv if not a.startswith("-")]
    if words[:2] == ["models", "download"]:
        return True
    if words and words[0] in ("run", "bench", "models", "doctor"):
        return False
    return "--self-test" not in argv


def child_environment(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """The switches above as this process has them, for a child that is started with a
    bare environment (the MCP SDK gives a server only PATH, HOME and a few more)."""
    env = os.environ if environ is None else environ
    return {name: env[name] for name in (*TELEMETRY_OFF, *OFFLINE) if name in env}
