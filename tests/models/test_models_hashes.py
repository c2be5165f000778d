"""Every model file is checked against a trusted sha256: a right-sized file of zeros is
rejected when downloaded, when verified and before its first use."""

from __future__ import annotations

import hashlib
import importlib
import io
from pathlib import Path

import pytest

from app.models.catalog import Catalog, ModelEntry, ModelFile, load_catalog, parse_catalog
from app.models.cli import main
from app.models.download import FileMeta, download
from app.models.errors import ModelError
from app.models.hashing import STAMPS_FILE, record_sum
from app.models.resolve import resolve
from app.models.verify import verify
from tests.models.models_fakehub import FakeHub

DATA = b"GGUF" + bytes(range(256)) * 1024
SHA = hashlib.sha256(DATA).hexdigest()
ZEROS = b"\0" * len(DATA)
ZEROS_SHA = hashlib.sha256(ZEROS).hexdigest()
REPO = "acme/tiny-GGUF"
PATH = f"/{REPO}/resolve/main/tiny.gguf"


def _hf_entry(sha256: str = SHA, size: int | None = len(DATA)) -> ModelEntry:
    return ModelEntry(
        role="llm", variant="production", title="tiny", source="hf", repo=REPO, dir="tiny",
        main="tiny.gguf", files=(ModelFile(name="tiny.gguf", size=size, sha256=sha256),),
    )


def _catalog(entry: ModelEntry) -> Catalog:
    vad = {"title": "silero", "source": "package", "package": "faster_whisper",
           "main": "assets/silero_vad_v6.onnx", "files": [{"name": "assets/silero_vad_v6.onnx"}]}
    production = entry.model_dump(exclude={"role", "variant"})
    return parse_catalog({
        "llm": {"production": production, "embedded": {**vad, "title": "l"}},
        "asr": {"embedded": {**vad, "title": "a"}},
        "tts": {"embedded": {**vad, "title": "t"}},
        "vad": {"embedded": vad},
    })


NOT_PINNED_YET = {("llm", "e4b"), ("llm", "e2b")}
"""Entries that track the hub's `main` (their hub LFS sha256 is checked and recorded at
download time); adding to this set is a decision, not an accident."""
UNSIZED_SMALL_FILES = {("asr", "small")}
"""Pinned revision and sha256 for every file, size from the hub for the small ones."""


def test_every_downloadable_file_in_the_manifest_has_a_size_and_a_sha256() -> None:
    catalog = load_catalog()
    for role in catalog.roles:
        for entry in catalog.downloadable(role):
            key = (entry.role, entry.variant)
            if key in NOT_PINNED_YET:
                assert entry.revision == "main" and entry.approx_size_gb, key
                continue
            for file in entry.files:
                if key in UNSIZED_SMALL_FILES and file.size is None:
                    assert len(file.sha256) == 64, (entry.title, file.name)
                    continue
                assert file.size is not None and file.size > 0, (entry.title, file.name)
                assert len(file.sha256) == 64, (entry.title, file.name)
            if entry.source == "hf":  # the hashes belong to one commit: pin it
                assert entry.revision is not None and len(entry.revision) == 40


def test_a_url_entry_without_a_hash_is_rejected() -> None:
    with pytest.raises(ValueError, match="needs a size and a sha256"):
        ModelEntry(role="tts", variant="production", title="v", source="url",
                   base_url="http://x/", dir="v", main="v.bin",
                   files=(ModelFile(name="v.bin", size=10),))


def test_zero_filled_download_of_the_right_size_is_rejected(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    fake_hub.add(PATH, ZEROS, ZEROS_SHA)  # the server even claims the zeros' own hash
    with pytest.raises(ModelError, match="checksum mismatch"):
        download(_hf_entry(), dest_dir=tmp_path, endpoint=fake_hub.url)
    assert not (tmp_path / "tiny" / "tiny.gguf").exists()
    assert not (tmp_path / "tiny" / "tiny.gguf.part").exists()


def test_url_download_checks_the_manifest_hash(fake_hub: FakeHub, tmp_path: Path) -> None:
    fake_hub.add("/release/voices.bin", ZEROS, ZEROS_SHA)
    entry = ModelEntry(role="tts", variant="production", title="voices", source="url",
                       base_url=fake_hub.url + "/release/", dir="kokoro", main="voices.bin",
                       files=(ModelFile(name="voices.bin", size=len(DATA), sha256=SHA),))
    with pytest.raises(ModelError, match="checksum mismatch"):
        download(entry, dest_dir=tmp_path)
    assert not (tmp_path / "kokoro" / "voices.bin").exists()


def test_no_trusted_hash_means_no_download(fake_hub: FakeHub, tmp_path: Path) -> None:
    fake_hub.add(PATH, DATA, SHA)
    with pytest.raises(ModelError, match=r"no trusted sha256 for tiny\.gguf"):
        download(_hf_entry(sha256=""), dest_dir=tmp_path, endpoint=fake_hub.url,
                 metadata=lambda url: FileMeta(len(DATA), ""))
    assert not any(m == "GET" for m, _, _ in fake_hub.requests)


def test_hub_lfs_hash_is_compared_when_the_manifest_has_none(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    fake_hub.add(PATH, ZEROS, SHA)  # the hub's LFS sha256 is the real one; the bytes are not
    with pytest.raises(ModelError, match="checksum mismatch"):
        download(_hf_entry(sha256="", size=None), dest_dir=tmp_path, endpoint=fake_hub.url)


def test_a_wrong_file_already_in_place_is_downloaded_again(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    fake_hub.add(PATH, DATA, SHA)
    dest = tmp_path / "tiny" / "tiny.gguf"
    dest.parent.mkdir(parents=True)
    dest.write_bytes(ZEROS)
    assert download(_hf_entry(), dest_dir=tmp_path, endpoint=fake_hub.url) == dest
    assert dest.read_bytes() == DATA


def test_verify_rejects_zeros_even_with_a_matching_sums_file(tmp_path: Path) -> None:
    root = tmp_path / "tiny"
    root.mkdir()
    (root / "tiny.gguf").write_bytes(ZEROS)
    record_sum(root, "tiny.gguf", ZEROS_SHA)  # what the old downloader wrote for zeros
    [check] = verify(_hf_entry(), root=root)
    assert check.state == "hash-mismatch"
    assert not check.ok


def test_verify_without_a_known_hash_is_unverified_not_ok(tmp_path: Path) -> None:
    root = tmp_path / "tiny"
    root.mkdir()
    (root / "tiny.gguf").write_bytes(DATA)
    [check] = verify(_hf_entry(sha256=""), root=root)
    assert check.state == "unverified"
    assert not check.ok


def test_verify_cli_hashes_with_progress_and_suggests_the_fix(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    resolve_mod = importlib.import_module("app.models.resolve")
    monkeypatch.setattr(resolve_mod, "repo_models_dir", lambda: tmp_path / "repo-models")
    monkeypatch.setattr("app.models.cli.load_catalog", lambda: _catalog(_hf_entry()))
    gguf = data_dir / "models" / "tiny" / "tiny.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(ZEROS)
    out = io.StringIO()
    assert main(["verify", "llm"], out=out) == 1
    text = out.getvalue()
    assert "llm production: tiny.gguf: hash mismatch" in text
    assert "run `hanasu models download llm`" in text
    assert "hashing tiny.gguf" in capsys.readouterr().err
    gguf.write_bytes(DATA)
    listing = io.StringIO()
    main(["list"], out=listing)
    assert "not hashed yet: run `hanasu models verify llm`" in listing.getvalue()
    out = io.StringIO()
    assert main(["verify", "llm"], out=out) == 0
    assert "llm production: tiny.gguf: ok\n" in out.getvalue()
    listing = io.StringIO()
    main(["list"], out=listing)
    assert "not hashed yet" not in listing.getvalue()


def test_resolve_hashes_a_model_before_its_first_use(tmp_path: Path) -> None:
    catalog = _catalog(_hf_entry())
    models_dir, data_dir = tmp_path / "repo-models", tmp_path / "user-models"
    gguf = data_dir / "tiny" / "tiny.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF" + ZEROS[4:])  # passes the header and size checks
    kw = {"catalog": catalog, "models_dir": models_dir, "data_dir": data_dir}
    with pytest.raises(ModelError, match=r"sha256 .* run `hanasu models download llm`"):
        resolve("llm", **kw)  # type: ignore[arg-type]
    gguf.write_bytes(DATA)
    assert resolve("llm", **kw).path == gguf  # type: ignore[arg-type]
    assert (gguf.parent / STAMPS_FILE).is_file()  # hashed once; later starts trust the stamp
