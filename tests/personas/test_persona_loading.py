"""Persona files: hostile ones are skipped with a reason, over-long text is refused with
its size, and the user's folder is one documented place, read by the app and by `run`."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.personas import load_persona_file, load_persona_library, load_personas, user_personas_dir
from app.personas.loader import legacy_personas_dir
from app.personas.model import MAX_SYSTEM_PROMPT_CHARS, Persona

FUZZ = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
MINIMAL = 'id = "{id}"\nname = "{name}"\nsystem_prompt = "You are {name}."\n'


@pytest.fixture(autouse=True)
def user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HANASU_CONFIG_DIR", str(tmp_path / "config"))


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_user_folder_is_in_the_data_dir(tmp_path: Path) -> None:
    assert user_personas_dir() == tmp_path / "data" / "personas"


def test_deeply_nested_persona_is_skipped_with_its_reason() -> None:
    path = _write(user_personas_dir(), "deep.toml", "a = " + "[" * 5_000 + "]" * 5_000)
    library = load_persona_library()
    assert {"hana", "kai", "captain"} <= {p.id for p in library.personas}
    [problem] = library.problems
    assert str(path) in problem
    assert "nested more than" in problem


def test_dotted_key_bomb_is_skipped() -> None:
    _write(user_personas_dir(), "dots.toml", "a" + ".a" * 5_000 + " = 1\n")
    [problem] = load_persona_library().problems
    assert "dotted parts" in problem


def test_five_megabyte_prompt_is_refused_with_its_size() -> None:
    text = MINIMAL.format(id="big", name="Big").replace(
        '"You are Big."', '"' + "x" * 5_242_880 + '"')
    path = _write(user_personas_dir(), "big.toml", text)
    with pytest.raises(ValueError) as caught:
        load_persona_file(path)
    assert str(caught.value) == (
        f"{path}: system_prompt is 5,242,880 characters; the limit is 32,000")
    library = load_persona_library()
    assert "big" not in {p.id for p in library.personas}
    assert any("system_prompt is 5,242,880 characters" in p for p in library.problems)


def test_prompt_at_the_limit_is_fine() -> None:
    persona = Persona(id="max", name="Max", system_prompt="x" * MAX_SYSTEM_PROMPT_CHARS)
    assert len(persona.system_prompt) == MAX_SYSTEM_PROMPT_CHARS


def test_user_persona_replaces_a_builtin_with_a_notice() -> None:
    path = _write(user_personas_dir(), "hana.toml", MINIMAL.format(id="hana", name="My Hana"))
    library = load_persona_library()
    assert library.get("hana").name == "My Hana"
    [notice] = library.notices
    assert notice == f"Your persona 'hana' ({path}) replaces the built-in persona 'hana'."


def test_two_user_files_with_one_id_are_reported() -> None:
    first = _write(user_personas_dir(), "a.toml", MINIMAL.format(id="twin", name="One"))
    second = _write(user_personas_dir(), "b.toml", MINIMAL.format(id="twin", name="Two"))
    library = load_persona_library()
    assert library.get("twin").name == "Two"
    assert library.notices == [f"{second} and {first} both define persona 'twin'; using {second}."]


def test_old_config_folder_is_still_read_with_a_notice() -> None:
    _write(legacy_personas_dir(), "old.toml", MINIMAL.format(id="old", name="Old"))
    library = load_persona_library()
    assert library.get("old").name == "Old"
    assert any("deprecated" in n and str(user_personas_dir()) in n for n in library.notices)


def test_run_and_bench_see_user_personas(monkeypatch: pytest.MonkeyPatch) -> None:
    """`hanasu run --persona ID` finds a persona from the user's folder."""
    from app.cli import run

    _write(user_personas_dir(), "mine.toml", MINIMAL.format(id="mine", name="Mine"))
    monkeypatch.setattr(run, "build_engines",
                        lambda choice: SimpleNamespace(notices=(), llm_languages=None))
    monkeypatch.setattr(run, "warm_engines", lambda engines, prompt: None)
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    args = parser.parse_args(["--input", "q.wav", "--output", "o.wav", "--persona", "mine",
                              "--fake-engines"])
    persona, _ = run.load_persona_and_engines(args)
    assert persona.name == "Mine"


@FUZZ
@given(st.binary(max_size=4096))
def test_any_bytes_are_a_persona_or_a_value_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.toml"
    path.write_bytes(data)
    with contextlib.suppress(ValueError):
        load_persona_file(path)


@FUZZ
@given(st.integers(min_value=1, max_value=3_000),
       st.sampled_from(["[", "{x = "]), st.sampled_from(["system_prompt", "voice", "a.b"]))
def test_any_nesting_is_a_persona_or_a_value_error(
    tmp_path: Path, depth: int, opener: str, key: str
) -> None:
    closer = "]" if opener == "[" else "}"
    path = tmp_path / "nest.toml"
    path.write_text(MINIMAL.format(id="n", name="N") + f"{key} = " + opener * depth + "1"
                    + closer * depth + "\n")
    with pytest.raises(ValueError):
        load_persona_file(path)


def test_bundled_personas_alone_still_load() -> None:
    library = load_personas()
    assert library.default.id == "hana"
    assert library.problems == [] and library.notices == []
