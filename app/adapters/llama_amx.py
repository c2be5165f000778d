"""llama.cpp's AMX weight buffers, used only where they work.

A llama.cpp built with ``-march=native`` on an Intel CPU with AMX (Sapphire Rapids and
newer) puts the weights in AMX buffers. On some such hosts the first token then dies of a
general protection fault inside ``libggml-cpu`` (virtual machines that advertise AMX, and
the AMX code GCC 11/12 generates; ollama#17205 and #17249 are the same crash): the app
would crash on every reply. Whether this machine is one of them is found out once, by
evaluating a token in a child process, and remembered per llama.cpp version and CPU.
Where it crashes, the model is loaded without the extra buffer types (plain CPU buffers,
AVX-512 kernels), which answers the same, a little slower on that CPU.

Run as ``python -m app.adapters.llama_amx MODEL [GPU_LAYERS]``: the probe itself (exit 0
when a prompt and a token were evaluated).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

AMX_IN_BUILD = "AMX_INT8 = 1"
OVERRIDE_ENV = "HANASU_LLAMA_AMX"
"""``1`` uses the AMX buffers without probing, ``0`` never uses them."""
PROBE_TIMEOUT_S = 300.0
"""Loading a 16 GB model from a cold disk and one token."""

_PARAMS_LOCK = threading.Lock()

Probe = Callable[[Path, int], bool]


def build_has_amx(llama_cpp: Any) -> bool:
    """Whether this llama.cpp build carries AMX kernels (its system info says so)."""
    info = llama_cpp.llama_print_system_info()
    text = info.decode(errors="replace") if isinstance(info, bytes) else str(info)
    return AMX_IN_BUILD in text


def cpu_name() -> str:
    """The CPU's model name (part of the remembered verdict's key)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    import platform

    return platform.processor() or platform.machine()


def probe_in_child(model: Path, gpu_layers: int) -> bool:
    """Evaluate a prompt of ``model`` with AMX buffers in a child process: False when the
    child died (a fault) or hung, True when it answered."""
    if getattr(sys, "frozen", False):
        return False  # no interpreter to run the probe with; our bundles build without AMX
    command = [sys.executable, "-m", "app.adapters.llama_amx", os.fspath(model), str(gpu_layers)]
    try:
        done = subprocess.run(
            command, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False,
            cwd=Path(__file__).resolve().parents[2],
        )
    except subprocess.TimeoutExpired:
        return False
    if done.returncode < 0:
        log.warning("llama.cpp AMX probe died of signal %d", -done.returncode)
    elif done.returncode > 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        log.warning("llama.cpp AMX probe exited %d: %s", done.returncode, tail[0][:200])
    return done.returncode == 0


def extra_buffers_allowed(
    llama_cpp: Any, model: Path, gpu_layers: int, verdicts: Path,
    probe: Probe = probe_in_child,
) -> bool:
    """Whether the model may use llama.cpp's extra (AMX, repacked) buffer types.

    Always, when the build has no AMX. Otherwise the remembered verdict for this build and
    CPU, or the probe's (then remembered in ``verdicts``, a small JSON file)."""
    forced = os.environ.get(OVERRIDE_ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    if not build_has_amx(llama_cpp):
        return True
    key = f"{getattr(llama_cpp, '__version__', '?')} | {cpu_name()}"
    known = _read_verdicts(verdicts)
    if isinstance(known.get(key), bool):
        return bool(known[key])
    log.info("llama.cpp has AMX kernels: trying a prompt in a child process first")
    works = probe(model, gpu_layers)
    if not works:
        log.warning(
            "llama.cpp's AMX kernels crash on this CPU; the language model uses plain CPU "
            "buffers (set %s=1 to force AMX)", OVERRIDE_ENV,
        )
    known[key] = works
    try:
        verdicts.parent.mkdir(parents=True, exist_ok=True)
        verdicts.write_text(json.dumps(known, indent=1))
    except OSError as exc:  # asked again next launch; nothing else is lost
        log.warning("could not remember the AMX verdict in %s: %s", verdicts, exc)
    return works


def _read_verdicts(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and len(data) < 100 else {}


@contextlib.contextmanager
def without_extra_buffers(llama_cpp: Any) -> Iterator[None]:
    """While a model loads, its parameters say ``use_extra_bufts = False``.

    ``llama_cpp.Llama`` has no argument for it: it builds the parameters from
    ``llama_model_default_params()``, so that function is wrapped for the load, under a
    lock (two loads at once must not see each other's wrapper)."""
    bindings = llama_cpp.llama_cpp
    with _PARAMS_LOCK:
        original = bindings.llama_model_default_params

        def defaults() -> Any:
            params = original()
            params.use_extra_bufts = False
            return params

        bindings.llama_model_default_params = defaults
        try:
            yield
        finally:
            bindings.llama_model_default_params = original


def _probe_main(argv: list[str]) -> int:
    import llama_cpp

    model = argv[0]
    layers = int(argv[1]) if len(argv) > 1 else 0
    llm = llama_cpp.Llama(model, n_gpu_layers=layers, n_ctx=256, verbose=False)
    # A prompt-sized batch: one or two tokens take the vector path, not the AMX kernels
    # (a 2-token probe passed on a machine where a 6-token prompt crashed).
    prompt = b"You are a friendly voice companion. Tell me about the sea. " * 8
    llm.eval(llm.tokenize(prompt, add_bos=True))
    llm.eval([llm.token_bos()])  # and one decoded token
    return 0


if __name__ == "__main__":
    sys.exit(_probe_main(sys.argv[1:]))
