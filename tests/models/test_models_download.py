"""Downloads against a local fake hub: verify, resume, reject, refuse, cancel."""

from __future__ import annotations

import errno
import hashlib
import shutil
import threading
from collections import namedtuple
from pathlib import Path
from typing import Any

import pytest

from app.models.catalog import ModelEntry, ModelFile
from app.models.download import FileMeta, download
from app.models.errors import DownloadCancelled, ModelError
from app.models.verify import verify
from tests.models.models_fakehub import FakeHub

DATA = bytes(range(256)) * 4096 * 3  # 3 MiB, more than one download chunk
SHA = hashlib.sha256(DATA).hexdigest()
REPO = "acme/tiny-GGUF"
PATH = f"/{REPO}/resolve/main/tiny.gguf"


def _entry(size: int | None = None, sha256: str = "") -> ModelEntry:
    return ModelEntry(
        role="llm",
        variant="production",
        title="tiny",
        source="hf",
        repo=REPO,
        dir="tiny",
        main="tiny.gguf",
        files=(ModelFile(name="tiny.gguf", size=size, sha256=sha256),),
    )


@pytest.fixture
def hub(fake_hub: FakeHub) -> FakeHub:
    fake_hub.add(PATH, DATA, SHA)
    return fake_hub


def test_download_verifies_sha_from_hub_metadata(hub: FakeHub, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    path = download(
        _entry(), dest_dir=tmp_path, endpoint=hub.url, progress=lambda d, t: seen.append((d, t))
    )
    assert path == tmp_path / "tiny" / "tiny.gguf"
    assert path.read_bytes() == DATA
    assert ("HEAD", PATH, None) in hub.requests  # huggingface_hub asked for size + LFS sha256
    assert seen[-1] == (len(DATA), len(DATA))
    assert [c.state for c in verify(_entry(), root=path.parent)] == ["ok"]
    assert not list(path.parent.glob("*.part"))


def test_resume_after_a_cut(hub: FakeHub, tmp_path: Path) -> None:
    hub.drop_after[PATH] = 300_000
    with pytest.raises(ModelError, match="interrupted at 300000 of 3145728 bytes"):
        download(_entry(), dest_dir=tmp_path, endpoint=hub.url, retries=0)
    part = tmp_path / "tiny" / "tiny.gguf.part"
    assert part.stat().st_size == 300_000
    assert not (tmp_path / "tiny" / "tiny.gguf").exists()
    path = download(_entry(), dest_dir=tmp_path, endpoint=hub.url)
    assert ("GET", PATH, "bytes=300000-") in hub.requests
    assert path.read_bytes() == DATA
    assert not part.exists()


def test_automatic_retry_resumes_in_one_call(hub: FakeHub, tmp_path: Path) -> None:
    hub.drop_after[PATH] = 1000
    path = download(_entry(len(DATA), SHA), dest_dir=tmp_path, endpoint=hub.url, retries=1)
    assert path.read_bytes() == DATA
    assert ("GET", PATH, "bytes=1000-") in hub.requests


def test_checksum_mismatch_leaves_nothing(hub: FakeHub, tmp_path: Path) -> None:
    wrong = "f" * 64
    with pytest.raises(ModelError, match="checksum mismatch"):
        download(_entry(sha256=wrong), dest_dir=tmp_path, endpoint=hub.url)
    folder = tmp_path / "tiny"
    assert not (folder / "tiny.gguf").exists()
    assert not (folder / "tiny.gguf.part").exists()


def test_not_enough_disk_space(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _p: usage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(ModelError) as info:
        download(_entry(), dest_dir=tmp_path, endpoint=hub.url)
    assert str(info.value) == (
        f"Not enough disk space: need 3.1 MB, 1.0 kB free in {tmp_path / 'tiny'}"
    )
    assert not any(m == "GET" for m, _, _ in hub.requests)  # refused before downloading


def test_cancel_keeps_a_resumable_part(hub: FakeHub, tmp_path: Path) -> None:
    cancel = threading.Event()

    def progress(done: int, total: int) -> None:
        cancel.set()  # cancel after the first chunk

    with pytest.raises(DownloadCancelled):
        download(_entry(), dest_dir=tmp_path, endpoint=hub.url, progress=progress, cancel=cancel)
    part = tmp_path / "tiny" / "tiny.gguf.part"
    assert 0 < part.stat().st_size < len(DATA)
    assert not (tmp_path / "tiny" / "tiny.gguf").exists()
    offset = part.stat().st_size
    path = download(_entry(), dest_dir=tmp_path, endpoint=hub.url)
    assert ("GET", PATH, f"bytes={offset}-") in hub.requests
    assert path.read_bytes() == DATA


def test_plain_url_entry_with_injected_metadata(fake_hub: FakeHub, tmp_path: Path) -> None:
    fake_hub.add("/release/voices.bin", DATA, SHA)
    entry = ModelEntry(
        role="tts",
        variant="production",
        title="voices",
        source="url",
        base_url=fake_hub.url + "/release/",
        dir="kokoro",
        main="voices.bin",
        files=(ModelFile(name="voices.bin", size=len(DATA), sha256=SHA),),
    )
    path = download(entry, dest_dir=tmp_path, metadata=lambda url: FileMeta(None, ""))
    assert path.read_bytes() == DATA
    assert download(entry, dest_dir=tmp_path) == path  # already there: nothing fetched
    assert sum(1 for m, _, _ in fake_hub.requests if m == "GET") == 1


def test_verify_reports_damage(hub: FakeHub, tmp_path: Path) -> None:
    path = download(_entry(), dest_dir=tmp_path, endpoint=hub.url)
    path.write_bytes(b"GGUF" + DATA[4:-1] + b"\0")
    assert [c.state for c in verify(_entry(), root=path.parent)] == ["hash-mismatch"]
    path.unlink()
    assert [c.state for c in verify(_entry(), root=path.parent)] == ["missing"]


def test_http_404_is_one_line(fake_hub: FakeHub, tmp_path: Path) -> None:
    entry = _entry(size=10, sha256="a" * 64)
    with pytest.raises(ModelError, match="HTTP 404"):
        download(entry, dest_dir=tmp_path, endpoint=fake_hub.url)


def test_a_second_download_of_the_same_model_is_refused(hub: FakeHub, tmp_path: Path) -> None:
    entry = _entry()
    started, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def slow_progress(done: int, total: int) -> None:
        started.set()
        release.wait(10)

    def first() -> None:
        try:
            download(entry, dest_dir=tmp_path, endpoint=hub.url, progress=slow_progress)
        except BaseException as exc:  # reported below
            errors.append(exc)

    worker = threading.Thread(target=first)
    worker.start()
    assert started.wait(10)
    with pytest.raises(ModelError, match="already downloading"):
        download(entry, dest_dir=tmp_path, endpoint=hub.url)
    release.set()
    worker.join(10)
    assert errors == []
    assert (tmp_path / "tiny" / "tiny.gguf").read_bytes() == DATA


class _FillingDisk:
    """A .part file on a disk that fills after ``room`` bytes (ENOSPC), until space is freed."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.real_open = Path.open

    def open(self, path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = self.real_open(path, mode, *args, **kwargs)
        if not path.name.endswith(".part") or "b" not in mode or "r" in mode:
            return handle
        disk = self

        class Full:
            def __enter__(self) -> Full:
                return self

            def __exit__(self, *exc: object) -> None:
                handle.close()

            def write(self, chunk: bytes) -> int:
                fits = chunk[: max(disk.room, 0)]
                handle.write(fits)
                disk.room -= len(fits)
                if len(fits) < len(chunk):
                    handle.flush()
                    raise OSError(errno.ENOSPC, "No space left on device")
                return len(chunk)

        return Full()


def test_a_disk_that_fills_mid_download_keeps_the_part_to_resume(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = _FillingDisk(room=1_500_000)
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: disk.open(self, *a, **k))
    with pytest.raises(ModelError) as info:
        download(_entry(), dest_dir=tmp_path, endpoint=hub.url)
    message = str(info.value)
    assert "\n" not in message and message.startswith("disk full while writing")
    assert "free some space" in message and "resume" in message
    part = tmp_path / "tiny" / "tiny.gguf.part"
    assert part.stat().st_size == 1_500_000  # what fitted is kept
    assert not (tmp_path / "tiny" / "tiny.gguf").exists()
    gets = [r for r in hub.requests if r[0] == "GET"]
    assert len(gets) == 1  # a full disk is not retried like a network cut
    disk.room = 10**9  # the user freed some space
    path = download(_entry(), dest_dir=tmp_path, endpoint=hub.url)
    assert ("GET", PATH, "bytes=1500000-") in hub.requests
    assert path.read_bytes() == DATA and not part.exists()
