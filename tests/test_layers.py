"""Import boundaries, read from the source (ast) without importing anything.

- The pure layers (app/core, app/personas, app/storage) import no Qt, audio or ML library and
  nothing from the outer layers: not the composition root (app.engines), not the adapters, not
  the UI. They stay testable without a display, a sound card or a model file.
- Nothing under app/ imports the test suite: the shipped app must not depend on tests/.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PURE_PACKAGES = ["app/core", "app/personas", "app/storage"]
FORBIDDEN_IN_PURE = (
    "PySide6",
    "sounddevice",
    "onnxruntime",
    "faster_whisper",
    "llama_cpp",
    "app.engines",
    "app.adapters",
    "app.ui",
)
KNOWN_TEST_IMPORTERS: set[str] = set()
"""None left: bench_ui's PulseAudio/Xvfb helpers moved to app/cli/virtual_audio.py (issue 7)."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> Iterator[str]:
    """Every module a file imports, anywhere in it (functions, TYPE_CHECKING blocks too)."""
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    return imports_in_source(path.read_text(encoding="utf-8"), package)


def imports_in_source(source: str, package: str) -> Iterator[str]:
    """``from pkg import name`` yields both ``pkg`` and ``pkg.name`` (name may be a submodule);
    relative imports are resolved against ``package``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)
        elif (  # importlib.import_module("x") / __import__("x") with a literal name
            isinstance(node, ast.Call)
            and _called_name(node.func) in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _matches(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_pure_layers_import_no_heavy_library_and_no_outer_layer() -> None:
    offenders = sorted(
        {
            f"{path.relative_to(REPO)}: {module}"
            for package in PURE_PACKAGES
            for path in (REPO / package).rglob("*.py")
            for module in imported_modules(path)
            if any(_matches(module, bad) for bad in FORBIDDEN_IN_PURE)
        }
    )
    assert offenders == []


def test_app_does_not_import_tests() -> None:
    offenders = sorted(
        {
            str(path.relative_to(REPO))
            for path in (REPO / "app").rglob("*.py")
            for module in imported_modules(path)
            if _matches(module, "tests")
        }
    )
    assert [p for p in offenders if p not in KNOWN_TEST_IMPORTERS] == []


def test_the_walker_sees_every_form_of_import() -> None:
    """The checks above can fail: each way of importing an outer layer is caught."""
    sample = (
        "from typing import TYPE_CHECKING\n"
        "import PySide6.QtCore\n"
        "from app import engines\n"
        "from .. import ui\n"
        "from ..adapters.errors import first_line\n"
        "if TYPE_CHECKING:\n"
        "    from tests.support import live_app\n"
        "def later() -> None:\n"
        "    import llama_cpp\n"
        "    importlib.import_module('tests.support.live_app')\n"
        "    __import__('sounddevice')\n"
    )
    found = set(imports_in_source(sample, "app.storage"))
    for module in ("PySide6.QtCore", "app.engines", "app.ui", "app.adapters.errors",
                   "tests.support", "llama_cpp", "tests.support.live_app", "sounddevice"):
        assert module in found, module
    assert not any(_matches(m, "app.engines") for m in imports_in_source(
        "import app.engines_extra\n", "app.storage"))
