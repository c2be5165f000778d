"""Where the app's files live, from a source checkout, an installed wheel or a frozen app.

The one owner of these answers: every other module (models, personas, storage, CLI) asks here,
so a frozen bundle, a checkout and the HANASU_*_DIR overrides mean the same thing everywhere.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

APP_NAME = "hanasu"
DATA_DIR_ENV = "HANASU_DATA_DIR"
CONFIG_DIR_ENV = "HANASU_CONFIG_DIR"
LOG_DIR_ENV = "HANASU_LOG_DIR"

_PACKAGE_DIR = Path(__file__).resolve().parent


def repo_root() -> Path:
    """The folder above the ``app`` package: the source checkout's root when run from one."""
    return _PACKAGE_DIR.parent


def frozen_bundle_dir() -> Path | None:
    """PyInstaller's unpack folder when running frozen, else None."""
    meipass = getattr(sys, "_MEIPASS", None)
    return Path(meipass) if meipass else None


def bundle_root() -> Path:
    """The folder holding ``assets/`` and ``models/``: PyInstaller's bundle, else the repo."""
    return frozen_bundle_dir() or repo_root()


def assets_dir() -> Path:
    packaged = _PACKAGE_DIR / "_assets"
    repo = bundle_root() / "assets"
    return repo if repo.is_dir() else packaged


def _dir(env: str, default: Path) -> Path:
    """The env override (``~`` expanded) when set and non-empty, else the platform default."""
    override = os.environ.get(env)
    return Path(override).expanduser() if override else default


def user_data_dir() -> Path:
    """The per-user data folder; HANASU_DATA_DIR overrides it (tests, portable installs)."""
    return _dir(DATA_DIR_ENV, platformdirs.user_data_path(APP_NAME))


def user_config_dir() -> Path:
    """The per-user settings folder; HANASU_CONFIG_DIR overrides it."""
    return _dir(CONFIG_DIR_ENV, platformdirs.user_config_path(APP_NAME))


def user_log_dir() -> Path:
    """The per-user log folder; HANASU_LOG_DIR overrides it."""
    return _dir(LOG_DIR_ENV, platformdirs.user_log_path(APP_NAME))
