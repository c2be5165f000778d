"""Where bundled files live, from a source checkout, an installed wheel or a frozen app."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

_PACKAGE_DIR = Path(__file__).resolve().parent


def bundle_root() -> Path:
    """The folder holding ``assets/`` and ``models/``: the repo, or PyInstaller's bundle."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root)
    return _PACKAGE_DIR.parent


def assets_dir() -> Path:
    packaged = _PACKAGE_DIR / "_assets"
    repo = bundle_root() / "assets"
    return repo if repo.is_dir() else packaged


def user_data_dir() -> Path:
    override = os.environ.get("HANASU_DATA_DIR")
    return Path(override) if override else platformdirs.user_data_path("hanasu")


def user_config_dir() -> Path:
    override = os.environ.get("HANASU_CONFIG_DIR")
    return Path(override) if override else platformdirs.user_config_path("hanasu")


def user_log_dir() -> Path:
    override = os.environ.get("HANASU_LOG_DIR")
    return Path(override) if override else platformdirs.user_log_path("hanasu")
