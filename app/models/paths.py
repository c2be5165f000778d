"""Where model files live: the repo's models/ folder, the user's data folder, installed packages.

Kept apart from resolution so tests and the UI can point each location somewhere else. The
app-wide folders (repo, frozen bundle, user data) come from app.paths, their one owner.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from app.paths import frozen_bundle_dir, repo_root, user_data_dir


def repo_models_dir() -> Path | None:
    """The models/ folder beside the app: the checkout's, or the one next to a frozen executable.

    A checkout counts only when models/manifest.toml is there, so an installed package never
    mistakes some unrelated site-packages/models folder for ours.
    """
    checkout = repo_root() / "models"
    if (checkout / "manifest.toml").is_file():
        return checkout
    if frozen_bundle_dir() is not None:
        beside_exe = Path(sys.executable).resolve().parent / "models"
        if beside_exe.is_dir():
            return beside_exe
    return None


def user_models_dir() -> Path:
    """Where `hanasu models download` puts production models."""
    return user_data_dir() / "models"


def package_dir(package: str) -> Path | None:
    """An installed package's folder, found WITHOUT importing it (some have broken __init__s)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))
