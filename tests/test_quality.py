"""Static checks are part of the test command: strict typing, lint, and a core free of
Qt, audio and ML libraries."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = {
    "PySide6",
    "sounddevice",
    "onnxruntime",
    "faster_whisper",
    "llama_cpp",
    "piper",
    "kokoro_onnx",
    "ctranslate2",
    "soundfile",
    "soxr",
    "huggingface_hub",
}
PURE_PACKAGES = ["app/core", "app/personas", "app/storage", "app/tools"]


def test_mypy_strict_passes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_passes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "app", "bench", "tests"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_core_imports_no_heavy_library() -> None:
    offenders = []
    for package in PURE_PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                offenders += [
                    f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] in HEAVY
                ]
    assert offenders == []


def test_every_app_package_is_listed_for_the_wheel() -> None:
    import tomllib

    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "app").rglob("__init__.py")
    }
    assert found - listed == set()


def test_modules_stay_small() -> None:
    """Small modules that each own one thing: none in app/core over 300 lines, none in the
    rest of app over 400 (the next capability lands in files a newcomer can read)."""
    too_long = []
    for path in sorted((REPO / "app").rglob("*.py")):
        limit = 300 if "core" in path.relative_to(REPO / "app").parts[:1] else 400
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            too_long.append(f"{path.relative_to(REPO)}: {lines} > {limit}")
    assert too_long == []
