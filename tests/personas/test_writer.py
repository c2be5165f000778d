"""Writing personas: whatever the user types comes back byte for byte through the TOML file,
the write is atomic (no partial or temporary file left), and a failed write is one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.personas.loader import load_persona_file, load_personas
from app.personas.model import CardOrigin, LlmSettings, Persona
from app.personas.writer import PersonaSaveError, persona_to_toml, save_persona

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=200)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_text.filter(lambda s: 0 < len(s) <= 40), prompt=_text.filter(bool),
       greeting=_text, description=st.text(max_size=120),
       temperature=st.none() | st.floats(0, 2), sentences=st.none() | st.integers(1, 20))
def test_any_text_survives_the_file(tmp_path: Path, name: str, prompt: str, greeting: str,
                                    description: str, temperature: float | None,
                                    sentences: int | None) -> None:
    try:
        persona = Persona(id="p", name=name, system_prompt=prompt, greeting=greeting,
                          description=description,
                          llm=LlmSettings(temperature=temperature, reply_sentences=sentences),
                          card=CardOrigin(personality=prompt, extra_json='{"a": [1, null]}'))
    except ValueError:
        return  # e.g. surrogates in the description: refused by the model, not our concern
    path = save_persona(persona, tmp_path)
    assert load_persona_file(path) == persona


def test_builtins_write_and_read_back(tmp_path: Path) -> None:
    for persona in load_personas().personas:
        assert load_persona_file(save_persona(persona, tmp_path)) == persona
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_overwrite_is_atomic_and_failure_is_one_line(tmp_path: Path) -> None:
    persona = Persona(id="p", name="P", system_prompt="You are P.")
    path = save_persona(persona, tmp_path)
    before = path.read_text()
    assert persona_to_toml(persona) == before
    blocked = tmp_path / "blocked.toml"
    blocked.mkdir()  # the rename onto it fails, as on a read-only or full disk
    with pytest.raises(PersonaSaveError, match=r"could not save .*blocked\.toml"):
        save_persona(persona, tmp_path, blocked)
    assert path.read_text() == before  # the other file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocked.toml", "p.toml"]  # no temp


def test_carriage_returns_survive_the_file(tmp_path: Path) -> None:
    """Found by the fuzz test above: TOML reads "\\r\\n" in a multi-line string as "\\n".
    (A persona now keeps every line break as "\\n", and a name on one line.)"""
    persona = Persona(id="p", name="\r\nP\r", system_prompt="line one\r\nline two\rthree\n")
    assert (persona.name, persona.system_prompt) == ("P", "line one\nline two\nthree\n")
    assert load_persona_file(save_persona(persona, tmp_path)) == persona
    plain = Persona(id="q", name="Q", system_prompt="line one\nline two\n")
    assert '"""' in persona_to_toml(plain)  # ordinary prompts stay readable, multi-line
