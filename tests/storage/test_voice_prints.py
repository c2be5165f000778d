"""Enrolled voices on disk: saved owner-only, listed, deleted from disk; a damaged or
hostile file is skipped, never fatal."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.voice_gate import VoicePrint
from app.storage.voice_prints import VoicePrintStore

EMBEDDING = tuple([1.0] + [0.0] * 255)


def voice(name: str = "Alice", at: float = 1.7e9) -> VoicePrint:
    return VoicePrint(name, EMBEDDING, at, 21.5)


def test_saved_voices_are_listed_oldest_first_and_owner_only(tmp_path: Path) -> None:
    store = VoicePrintStore(tmp_path / "voices")
    path = store.save(voice("Bob", 2.0e9))
    store.save(voice("Alice"))
    assert [v.name for v in store.all()] == ["Alice", "Bob"]
    assert store.all()[0] == voice("Alice")
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_saving_a_name_again_replaces_it(tmp_path: Path) -> None:
    store = VoicePrintStore(tmp_path)
    store.save(voice("Alice", 1.0))
    store.save(voice("Alice", 5.0))
    assert [v.enrolled_at for v in store.all()] == [5.0]


def test_deleting_removes_the_file(tmp_path: Path) -> None:
    store = VoicePrintStore(tmp_path)
    path = store.save(voice())
    assert store.delete("Alice")
    assert not path.exists() and store.all() == []
    assert not store.delete("Alice")


def test_names_that_look_alike_get_their_own_files(tmp_path: Path) -> None:
    store = VoicePrintStore(tmp_path)
    store.save(voice("Ann-Marie"))
    store.save(voice("ann marie"))
    store.save(voice("../../etc"))
    assert len(list(tmp_path.glob("*.json"))) == 3
    assert not (tmp_path.parent / "etc").exists()


@pytest.mark.parametrize("bad", [
    b"\xff\xfe", b"[]", b'{"schema_version": 1}', b"{" * 5000,
    json.dumps({"schema_version": 1, "name": "A", "enrolled_at": 1, "speech_s": 2,
                "embedding": [1.0] * 3}).encode(),
    json.dumps({"schema_version": 1, "name": "A", "enrolled_at": 1, "speech_s": 2,
                "embedding": [True] * 256}).encode(),
    b'{"schema_version": 1, "name": "A", "enrolled_at": 1, "speech_s": NaN, '
    b'"embedding": []}',
])
def test_a_damaged_file_is_skipped(tmp_path: Path, bad: bytes) -> None:
    store = VoicePrintStore(tmp_path)
    store.save(voice())
    (tmp_path / "zz-broken.json").write_bytes(bad)
    assert [v.name for v in store.all()] == ["Alice"]


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_take_it_down(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "x.json").write_bytes(data)
        assert VoicePrintStore(Path(folder)).all() == []


def test_bad_prints_are_refused(tmp_path: Path) -> None:
    store = VoicePrintStore(tmp_path)
    with pytest.raises(ValueError):
        store.save(VoicePrint("A", (1.0,), 1.0, 1.0))
    with pytest.raises(ValueError):
        store.save(voice("  "))


def test_a_learnt_voice_is_kept_or_used_anyway_on_a_full_disk(tmp_path: Path) -> None:
    """On a real full disk (a small tmpfs) the learnt print is not lost for the session:
    it is used, and the user is told in one line why it will not be there next time."""
    from app.storage.voice_prints import keep_learnt
    from tests.support.tmpfs import fill, small_tmpfs

    with small_tmpfs(tmp_path / "disk") as disk:
        store = VoicePrintStore(disk / "voices")
        store.save(voice("Alice"))
        filler = fill(disk)
        prints, problem = keep_learnt(voice("You (learnt)", 2.0e9), store)
        assert [p.name for p in prints] == ["Alice", "You (learnt)"]
        assert problem == ("Your voice was learnt but could not be saved (the disk is full): it "
                           "is used until Hanasu closes.")
        assert [p.name for p in store.all()] == ["Alice"]  # nothing half-written
        filler.unlink()
        prints, problem = keep_learnt(voice("You (learnt)", 2.0e9), store)
        assert problem is None and [p.name for p in prints] == ["Alice", "You (learnt)"]
        assert [p.name for p in store.all()] == ["Alice", "You (learnt)"]
