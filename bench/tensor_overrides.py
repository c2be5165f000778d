"""Keep a MoE model's expert tensors in system RAM while the rest goes to the GPU.

llama.cpp does this with tensor buffer-type overrides (``llama-server -ot exps=CPU``): every
tensor whose name matches the pattern is placed in the CPU buffer type. llama-cpp-python 0.3.x
declares ``llama_model_params.tensor_buft_overrides`` but never sets it, so this fills it in,
for the duration of one ``Llama(...)`` load, through ctypes: a NULL-terminated array of
``{const char *pattern; ggml_backend_buffer_type_t buft}`` with the CPU buffer type from the
ggml library llama-cpp-python ships. Used by ``hanasu bench gpu --experts-on-cpu``, to measure
the 8-16 GB GPU tier before the app's LLM adapter adopts it.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator
from pathlib import Path
from typing import Any

EXPERTS = "exps"
"""Matches Gemma 4's ffn_gate_up_exps / ffn_down_exps (as `-ot exps=CPU` does)."""


class _Override(ctypes.Structure):
    _fields_ = [("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p)]


def cpu_buffer_type() -> int:
    """The address of ggml's CPU buffer type, from the libraries llama-cpp-python loaded."""
    import llama_cpp

    lib = Path(llama_cpp.__file__).parent / "lib"
    for path in sorted(lib.glob("*ggml*")):
        shared = path.suffix in (".so", ".dylib", ".dll") or ".so." in path.name
        if not (path.is_file() and shared):
            continue
        try:
            handle = ctypes.CDLL(str(path))
            fn = handle.ggml_backend_cpu_buffer_type
        except (OSError, AttributeError):
            continue
        fn.restype, fn.argtypes = ctypes.c_void_p, []
        address = fn()
        if address:
            return int(address)
    raise RuntimeError("ggml_backend_cpu_buffer_type not found in llama-cpp-python's libraries")


@contextlib.contextmanager
def tensors_on_cpu(pattern: str = EXPERTS) -> Iterator[None]:
    """Inside: every model llama-cpp-python loads keeps tensors matching `pattern` on the CPU."""
    from llama_cpp import _internals

    overrides = (_Override * 2)()
    overrides[0].pattern = pattern.encode()
    overrides[0].buft = cpu_buffer_type()
    # overrides[1] stays zeroed: the NULL terminator
    real = _internals.LlamaModel

    def load(*args: Any, **kwargs: Any) -> Any:
        params = kwargs["params"] if "params" in kwargs else args[1]
        params.tensor_buft_overrides = ctypes.cast(overrides, ctypes.c_void_p)
        try:
            return real(*args, **kwargs)
        finally:
            params.tensor_buft_overrides = None  # the array dies with this context

    _internals.LlamaModel = load  # type: ignore[misc,assignment]
    try:
        yield
    finally:
        _internals.LlamaModel = real  # type: ignore[misc]
