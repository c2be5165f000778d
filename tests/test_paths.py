"""app.paths is the one owner of the app's folders: the frozen bundle, the repo, the user dirs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app import paths
from app.models import catalog
from app.models import paths as model_paths


def test_source_checkout_has_no_frozen_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "_MEIPASS", raising=False)
    assert paths.frozen_bundle_dir() is None
    assert paths.bundle_root() == paths.repo_root()
    assert (paths.repo_root() / "app" / "paths.py").is_file()
    assert catalog.manifest_candidates()[0] == paths.repo_root() / "models" / "manifest.toml"


def test_frozen_bundle_is_seen_by_app_and_models_alike(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert paths.frozen_bundle_dir() == tmp_path
    assert paths.bundle_root() == tmp_path
    assert tmp_path / "models" / "manifest.toml" in catalog.manifest_candidates()


@pytest.mark.parametrize(
    ("env", "func"),
    [
        ("HANASU_DATA_DIR", paths.user_data_dir),
        ("HANASU_CONFIG_DIR", paths.user_config_dir),
        ("HANASU_LOG_DIR", paths.user_log_dir),
    ],
)
def test_overrides_expand_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: str, func: Callable[[], Path]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(env, "~/portable")
    assert func() == tmp_path / "portable"
    monkeypatch.setenv(env, "")
    assert func() != Path("")  # an empty override means "not set": the platform default


def test_models_live_in_the_same_user_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("HANASU_DATA_DIR", "~/data")
    assert model_paths.user_models_dir() == paths.user_data_dir() / "models"
    assert model_paths.user_models_dir() == tmp_path / "data" / "models"


def test_one_definition_of_each_folder() -> None:
    """No other module under app/ defines its own bundle_root / user_data_dir / repo_root."""
    owned = {"bundle_root", "frozen_bundle_dir", "repo_root", "user_data_dir", "user_config_dir"}
    app_dir = paths.repo_root() / "app"
    others = [
        f"{p.relative_to(app_dir.parent)}: {name}"
        for p in app_dir.rglob("*.py")
        if p != app_dir / "paths.py"
        for name in owned
        if f"\ndef {name}(" in p.read_text(encoding="utf-8")
    ]
    assert others == []
