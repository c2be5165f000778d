"""Import boundaries, read from the source (ast) without importing anything.

One declarative contract: ``LAYERS`` maps each layer (a folder of modules) to the imports
it must not make, anywhere in a module (top level, functions, TYPE_CHECKING blocks,
``importlib.import_module("literal")``); one test checks every module against it.

- The pure layers (app/core, app/personas, app/storage) import no Qt, audio or ML library
  and nothing from the outer layers. They stay testable without a display, a sound card or
  a model file. app/core also imports none of the other app layers (storage, personas,
  models, cli, ui, the composition root, the adapters).
- Nothing under app/ imports bench/ or tests/: the shipped app (wheel, bundle) has neither.
  The one sanctioned way in is ``ALLOWED``: ``app/__main__.py``'s ``bench_commands()``
  looks ``bench.commands`` up with ``importlib.import_module`` at call time, inside a
  function, and answers None (one line, exit 2) where it is absent. Any other import of
  bench from app, at any level, breaks the contract.
- app/ui does not import app/cli (the command line sits above the window, not below it).
- app/tools (the tool layer: declarations, call formats, rule-based requests, built-in
  tools) imports the standard library only, no other app layer: app/core may use its types
  for the reply stream, and app/storage implements its ports (reminders, notes). The user's
  MCP servers (``mcp_*``) add pydantic for their settings and the ``mcp`` SDK, imported
  inside the functions that start a server.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("PySide6", "sounddevice", "onnxruntime", "faster_whisper", "llama_cpp", "soundfile",
         "soxr", "piper", "kokoro_onnx", "livekit", "huggingface_hub", "gguf")
OUTER = ("app.engines", "app.adapters", "app.ui", "app.cli", "bench", "tests")
LAYERS: dict[str, tuple[str, ...]] = {
    "app/core": (*HEAVY, *OUTER, "app.storage", "app.personas", "app.models"),
    "app/personas": (*HEAVY, *OUTER),
    "app/storage": (*HEAVY, *OUTER),
    "app/tools": (*HEAVY, *OUTER, "app.core", "app.storage", "app.personas", "app.models",
                  "app.paths", "app.privacy", "app.gpu"),
    "app": ("bench", "tests"),
    "app/ui": ("app.cli",),
}
"""layer folder -> forbidden imports (a module and everything under it)."""
ALLOWED = {("app/__main__.py", "bench.commands")}
"""(file, module) pairs a rule permits by design: the call-time lookup of the benchmarks."""
KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()
"""(file, imported module) pairs that break a rule today and are to be removed; none now
(app/core was checked against its row when the row was written)."""


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


def layer_offenders(layers: dict[str, tuple[str, ...]]) -> set[tuple[str, str]]:
    return {
        (str(path.relative_to(REPO)), module)
        for layer, forbidden in layers.items()
        for path in (REPO / layer).rglob("*.py")
        for module in imported_modules(path)
        if any(_matches(module, bad) for bad in forbidden)
    }


def test_every_layer_keeps_its_import_contract() -> None:
    assert sorted(layer_offenders(LAYERS) - KNOWN_EXCEPTIONS - ALLOWED) == []
    # an exception that no longer happens is taken out of the table
    assert sorted((KNOWN_EXCEPTIONS | ALLOWED) - layer_offenders(LAYERS)) == []


def test_app_reaches_bench_only_at_call_time() -> None:
    """The allowed lookup sits inside a function, never at module level."""
    tree = ast.parse((REPO / "app" / "__main__.py").read_text(encoding="utf-8"))
    top_level = {n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert not any(
        isinstance(c, ast.Constant) and c.value == "bench.commands"
        for node in top_level for c in ast.walk(node)
    )


def test_the_contract_can_fail() -> None:
    """Each row bites: the real tree breaks a rule as soon as it is tightened."""
    assert ("app/__main__.py", "app.cli") in {
        (f, m) for f, m in layer_offenders({"app": ("app.cli",)})
    }
    found = layer_offenders({"bench": ("app.cli",)})
    assert any(f.startswith("bench/") for f, _ in found)


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
