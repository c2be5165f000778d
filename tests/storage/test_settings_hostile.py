"""A hostile settings file never takes the app down: it is moved aside with a reason, the
app starts with defaults, and the next launch starts clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.storage.settings import (
    MAX_SETTINGS_BYTES,
    Settings,
    load_settings,
    load_settings_with_notice,
    save_settings,
)

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_deeply_nested_file_is_moved_aside_and_the_next_launch_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    hostile = "[" * 5_000 + "]" * 5_000
    path.write_text(hostile)
    settings_, notice = load_settings_with_notice(path)
    assert settings_ == Settings()
    assert "nested more than" in notice
    assert str(tmp_path / "settings.json.bad") in notice
    assert (tmp_path / "settings.json.bad").read_text() == hostile  # nothing lost
    assert not path.exists()
    assert load_settings_with_notice(path) == (Settings(), "")  # second launch: clean


def test_huge_file_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    with path.open("wb") as handle:
        handle.truncate(MAX_SETTINGS_BYTES + 1)
    settings_, notice = load_settings_with_notice(path)
    assert settings_ == Settings()
    assert "larger than" in notice
    assert (tmp_path / "settings.json.bad").stat().st_size == MAX_SETTINGS_BYTES + 1


def test_unreadable_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.mkdir()  # a folder where the file should be: nothing to move, nothing to lose
    settings_, notice = load_settings_with_notice(path)
    assert settings_ == Settings()
    assert "Could not read the settings file" in notice
    assert path.is_dir()


def test_good_file_has_no_notice(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    save_settings(Settings(muted=True), path)
    assert load_settings_with_notice(path) == (Settings(muted=True), "")


@FUZZ
@given(st.binary(max_size=2048))
def test_any_bytes_give_settings(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(data)
    assert isinstance(load_settings(path), Settings)
    for leftover in tmp_path.iterdir():
        leftover.unlink()


@FUZZ
@given(st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=30,
), st.integers(min_value=0, max_value=2_000))
def test_any_json_at_any_depth_gives_settings(tmp_path: Path, value: object, depth: int) -> None:
    path = tmp_path / "settings.json"
    path.write_text("[" * depth + json.dumps(value) + "]" * depth)
    assert isinstance(load_settings(path), Settings)
    for leftover in tmp_path.iterdir():
        leftover.unlink()


@pytest.mark.parametrize("key", ["persona_id", "input_device", "llm_path"])
def test_nested_values_in_string_fields_are_rejected_not_crashing(tmp_path: Path, key: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({key: [[[[["x"]]]]]}))
    settings_, notice = load_settings_with_notice(path)
    assert settings_ == Settings()
    assert key in notice
