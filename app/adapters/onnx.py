"""One way to open the small ONNX models (Silero VAD, Smart Turn) on the CPU."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from app.adapters.errors import EngineLoadError, first_line


def cpu_session(path: Path | bytes, what: str, threads: int = 1) -> Any:
    """An onnxruntime CPU session, sequential and quiet; ``what`` names the model in errors.
    ``path`` may be the model itself (one built in memory).

    These models run every few tens of milliseconds beside the LLM and ASR, so they get
    one thread each rather than competing for every core."""
    if isinstance(path, Path) and not path.is_file():
        raise EngineLoadError(f"{what} not found: {path}")
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 4
    try:
        return ort.InferenceSession(
            path if isinstance(path, bytes) else os.fspath(path), sess_options=opts,
            providers=["CPUExecutionProvider"],
        )
    except Exception as exc:
        where = "" if isinstance(path, bytes) else f" {path}"
        raise EngineLoadError(f"{what}{where} could not be loaded: {first_line(exc)}") from exc
