"""Download production models into the user's data folder: resumable, verified, cancellable.

A plain HTTP(S) downloader (urllib) handles every URL, Hugging Face included: it resumes a
`.part` file with `Range: bytes=N-`, verifies sha256, and only then renames the file to its final
name, so a cut, a crash or a cancel never leaves a half file where the resolver looks. Every file
needs a trusted sha256: the manifest's, or for Hugging Face files whose manifest entry has none,
the LFS sha256 from huggingface_hub's file metadata (injectable, so tests run against a local
server); a file without one is refused, never downloaded unchecked.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import http.client
import logging
import os
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from app.models.catalog import ModelEntry
from app.models.errors import DownloadCancelled, ModelError
from app.models.hashing import record_stamp, record_sum, sha256_file, stamp_matches
from app.models.paths import user_models_dir
from app.models.resolve import entry_root
from app.models.units import human

log = logging.getLogger(__name__)

ProgressFn = Callable[[int, int], None]
CHUNK = 1 << 20
USER_AGENT = "hanasu-model-downloader/1"


@dataclass(frozen=True)
class FileMeta:
    """What the server says about a file before downloading it."""

    size: int | None
    sha256: str


MetadataFn = Callable[[str], FileMeta]


def hub_metadata(url: str) -> FileMeta:
    """Size and LFS sha256 of a Hugging Face file (the LFS etag is the sha256)."""
    from huggingface_hub import get_hf_file_metadata

    try:
        meta = get_hf_file_metadata(url)
    except Exception as exc:  # network, HTTP and hub errors all mean the same to the user
        raise ModelError(f"cannot reach the model hub for {url}: {exc}") from exc
    etag = (meta.etag or "").strip('"').lower()
    sha = etag if len(etag) == 64 and all(c in "0123456789abcdef" for c in etag) else ""
    return FileMeta(meta.size, sha)


@dataclass(frozen=True)
class PlannedFile:
    """One file to fetch, with what it must turn out to be."""

    name: str
    url: str
    dest: Path
    size: int | None
    sha256: str

    @property
    def part(self) -> Path:
        """The partial file, resumed by the next attempt."""
        return self.dest.with_name(self.dest.name + ".part")

    def part_size(self) -> int:
        """Bytes already fetched."""
        return self.part.stat().st_size if self.part.exists() else 0


class _Interrupted(Exception):
    """A network failure after which resuming makes sense."""


def plan(
    entry: ModelEntry,
    root: Path,
    *,
    endpoint: str | None = None,
    metadata: MetadataFn | None = None,
) -> list[PlannedFile]:
    """The files of `entry` still to fetch, with sizes/hashes from the manifest and the hub."""
    if not entry.downloadable:
        raise ModelError(f"the {entry.role} model {entry.variant!r} ships with the app")
    lookup = metadata or (hub_metadata if entry.source == "hf" else None)
    todo: list[PlannedFile] = []
    for file in entry.files:
        dest = root / file.name
        url = entry.file_url(file, endpoint)
        size, sha = file.size, file.sha256
        if lookup is not None and (size is None or not sha):
            meta = lookup(url)
            if size is not None and meta.size is not None and meta.size != size:
                raise ModelError(
                    f"{file.name} on the server is {meta.size} bytes but the manifest says {size};"
                    " the manifest needs an update"
                )
            size = size if size is not None else meta.size
            sha = sha or meta.sha256
        if not sha:
            raise ModelError(
                f"no trusted sha256 for {file.name}: the manifest has none and the server gave"
                " none, so the download could not be verified; the manifest needs an update"
            )
        if _already_there(dest, size, sha):
            continue
        todo.append(PlannedFile(file.name, url, dest, size, sha))
    return todo


def _already_there(dest: Path, size: int | None, sha: str) -> bool:
    """True if dest is already the wanted file (hashing it unless a stamp vouches for it)."""
    if not dest.is_file() or (size is not None and dest.stat().st_size != size):
        return False
    if stamp_matches(dest.parent, dest.name, sha):
        return True
    digest = sha256_file(dest).hexdigest()
    if digest != sha:
        log.warning("%s has the right size but the wrong sha256; downloading it again", dest)
        return False
    record_stamp(dest.parent, dest.name, digest)
    return True


def check_disk_space(files: list[PlannedFile], root: Path) -> None:
    """Fail before downloading when the remaining bytes do not fit on the target disk."""
    need = sum(max((f.size or 0) - f.part_size(), 0) for f in files)
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if need > free:
        raise ModelError(f"Not enough disk space: need {human(need)}, {human(free)} free in {root}")


class _Progress:
    """Sums bytes over all files of one download and reports them."""

    def __init__(self, files: list[PlannedFile], callback: ProgressFn | None) -> None:
        self.total = sum(f.size or 0 for f in files)
        self.done = sum(f.part_size() for f in files)
        self.callback = callback

    def add(self, n: int) -> None:
        self.done += n
        if self.callback is not None:
            self.callback(self.done, max(self.total, self.done))


def _open(url: str, offset: int, timeout: float) -> http.client.HTTPResponse:
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    response: http.client.HTTPResponse = urllib.request.urlopen(request, timeout=timeout)
    return response


def _fetch_once(
    pf: PlannedFile, progress: _Progress, cancel: threading.Event | None, timeout: float
) -> hashlib._Hash:
    """Append the rest of the file to its .part; return the sha256 of the whole part."""
    offset = pf.part_size()
    if pf.size is not None and offset > pf.size:
        log.warning("%s is longer than expected; starting over", pf.part)
        progress.add(-offset)
        pf.part.unlink()
        offset = 0
    hasher = sha256_file(pf.part) if offset else hashlib.sha256()
    if pf.size is not None and offset == pf.size:
        return hasher
    try:
        response = _open(pf.url, offset, timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset and pf.size is None:
            return hasher  # nothing left to send: the part is the whole file
        if exc.code >= 500 or exc.code == 429:
            raise _Interrupted(f"HTTP {exc.code}") from exc
        raise ModelError(f"download failed: HTTP {exc.code} for {pf.url}") from exc
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise _Interrupted(str(getattr(exc, "reason", exc))) from exc
    with response:
        mode = "ab"
        if offset and response.status != 206:
            log.info("server ignored the range request for %s; starting over", pf.name)
            progress.add(-offset)
            hasher, mode = hashlib.sha256(), "wb"
        try:
            with pf.part.open(mode) as out:
                while True:
                    if cancel is not None and cancel.is_set():
                        raise DownloadCancelled(
                            f"download of {pf.name} cancelled; run it again to resume"
                        )
                    chunk = response.read(CHUNK)
                    if not chunk:
                        break
                    out.write(chunk)
                    hasher.update(chunk)
                    progress.add(len(chunk))
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                raise ModelError(
                    f"disk full while writing {pf.part}: free some space and download again "
                    f"to resume from {human(pf.part_size())}"
                ) from exc
            raise _Interrupted(str(exc) or type(exc).__name__) from exc
    got = pf.part_size()
    if pf.size is not None and got < pf.size:
        raise _Interrupted("connection closed early")
    return hasher


def fetch_file(
    pf: PlannedFile,
    progress: _Progress,
    *,
    cancel: threading.Event | None = None,
    retries: int = 2,
    timeout: float = 30.0,
) -> None:
    """Download one file to its .part, verify it, then move it to its final name."""
    pf.dest.parent.mkdir(parents=True, exist_ok=True)
    attempt = 0
    while True:
        try:
            hasher = _fetch_once(pf, progress, cancel, timeout)
            break
        except _Interrupted as exc:
            if attempt >= retries:
                have = pf.part_size()
                of = f" of {pf.size}" if pf.size is not None else ""
                raise ModelError(
                    f"download of {pf.name} interrupted at {have}{of} bytes ({exc});"
                    " run the same command again to resume"
                ) from exc
            attempt += 1
            log.warning("download of %s interrupted (%s); resuming", pf.name, exc)
            time.sleep(min(2.0**attempt, 10.0) / 4)
    size = pf.part_size()
    if pf.size is not None and size != pf.size:
        pf.part.unlink()
        raise ModelError(f"{pf.name}: got {size} bytes, expected {pf.size}; deleted, try again")
    digest = hasher.hexdigest()
    if digest != pf.sha256:  # plan() never lets a file through without a trusted hash
        pf.part.unlink()
        raise ModelError(
            f"checksum mismatch for {pf.name} (expected {pf.sha256[:12]}…, got {digest[:12]}…);"
            " the download was deleted"
        )
    os.replace(pf.part, pf.dest)
    record_sum(pf.dest.parent, pf.dest.name, digest)
    record_stamp(pf.dest.parent, pf.dest.name, digest)
    log.info("downloaded %s (%d bytes, sha256 %s)", pf.dest, size, digest)


def download(
    entry: ModelEntry,
    *,
    dest_dir: Path | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    endpoint: str | None = None,
    metadata: MetadataFn | None = None,
    retries: int = 2,
    timeout: float = 30.0,
) -> Path:
    """Fetch every missing file of `entry` into dest_dir (default: user models folder).

    Returns the path the app loads (the entry's `main`). Safe to call again after any failure or
    cancel: finished files are skipped and the current one resumes from its .part file.
    """
    root = entry_root(entry, dest_dir if dest_dir is not None else user_models_dir())
    with _only_download_of(root, entry):
        files = plan(entry, root, endpoint=endpoint, metadata=metadata)
        if files:
            check_disk_space(files, root)
            root.mkdir(parents=True, exist_ok=True)
            tracker = _Progress(files, progress)
            for pf in files:
                fetch_file(pf, tracker, cancel=cancel, retries=retries, timeout=timeout)
    return root / entry.main


_ACTIVE: set[Path] = set()
_ACTIVE_LOCK = threading.Lock()


@contextlib.contextmanager
def _only_download_of(root: Path, entry: ModelEntry) -> Iterator[None]:
    """Two downloads of one model (the welcome page and the Models dialog, say) would append
    to the same .part file; the second is refused in one line instead."""
    key = root.resolve()
    with _ACTIVE_LOCK:
        if key in _ACTIVE:
            raise ModelError(f"{entry.title} is already downloading")
        _ACTIVE.add(key)
    try:
        yield
    finally:
        with _ACTIVE_LOCK:
            _ACTIVE.discard(key)
