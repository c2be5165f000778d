"""The real Live2D model the tests draw: "Shizuku", a Live2D original character and sample
model by Live2D Inc. (Cubism 2), as the npm package live2d-widget-model-shizuku 1.0.5
carries it. It is under Live2D's Free Material License Agreement and Terms of Use for
Live2D Cubism Sample Data, which forbid redistributing it: it is never committed, only
fetched by ``tests/setup.sh`` (``python -m tests.support.live2d_sample``), checked against
its SHA-256 and kept in the git-ignored ``models/live2d-sample/``. Idempotent."""

from __future__ import annotations

import hashlib
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

PACKAGE = "live2d-widget-model-shizuku"
VERSION = "1.0.5"
URL = f"https://registry.npmjs.org/{PACKAGE}/-/{PACKAGE}-{VERSION}.tgz"
SHA256 = "bb5aabe1c6ff0ed1d1916872de8fe22b57912834be43006323f046caa8a6eadd"
FOLDER = Path(__file__).resolve().parents[2] / "models" / "live2d-sample" / "shizuku"
MODEL = FOLDER / "shizuku.model.json"
"""Its model file; the package's ``assets/`` folder is ``FOLDER``."""
_DONE = FOLDER / f".{SHA256}"


def fetch() -> Path:
    """The sample's model file, downloaded and unpacked unless it already is."""
    if _DONE.is_file() and MODEL.is_file():
        return MODEL
    with tempfile.TemporaryDirectory() as scratch:
        archive = Path(scratch) / "package.tgz"
        with urllib.request.urlopen(URL, timeout=60) as response, archive.open("wb") as out:
            shutil.copyfileobj(response, out)
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != SHA256:
            raise RuntimeError(f"{URL} has SHA-256 {digest}, expected {SHA256}")
        unpacked = Path(scratch) / "unpacked"
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
        shutil.rmtree(FOLDER, ignore_errors=True)
        FOLDER.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(unpacked / "package" / "assets", FOLDER)
    _DONE.touch()
    return MODEL


def main() -> int:
    try:
        print(fetch())
    except (OSError, RuntimeError, tarfile.TarError) as exc:
        print(f"live2d sample: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
