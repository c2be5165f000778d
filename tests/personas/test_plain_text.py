"""Names and descriptions from persona files and character cards reach the terminal and
the sidebar without control characters or bidi overrides (``plain_text``): a card cannot
recolour the terminal ``hanasu personas list`` prints to, nor make a name read backwards;
every readable character, in any script, stays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.personas.card_file import parse_card
from app.personas.cards import card_to_persona, import_card
from app.personas.loader import load_persona_file, load_personas
from app.personas.model import Persona
from app.personas.text import plain_text

REPO = Path(__file__).resolve().parents[2]
HOSTILE = ("\x1b]0;pwned\x07\x1b[31mEve\x1b[0m\u202e\u2066gnp.exe\u2069\x00\x9b2J"
           "\x7f \u202aMallory\u202c")
"""An OSC window-title change, SGR colours, RLO and an isolate, NUL, a C1 CSI that
clears the screen, DEL, an embedding: all acted on, none readable."""
BAD = ["\x1b", "\x07", "\x00", "\x7f", "\x9b", "\u202a", "\u202b", "\u202c", "\u202d",
       "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\ud800"]


def _clean(text: str) -> bool:
    return not any(ch in text for ch in BAD)


@pytest.mark.parametrize(
    ("raw", "one_line", "multiline"),
    [
        ("Hana", "Hana", "Hana"),
        ("花子 · Ханна · هناء\u200f", "花子 · Ханна · هناء\u200f", "花子 · Ханна · هناء\u200f"),
        ("a\u202eb\u2066c\u2069", "abc", "abc"),
        ("\x1b[31mred\x1b[0m", "[31mred[0m", "[31mred[0m"),  # ESC gone: now harmless text
        ("one\ntwo\tthree\r\nfour\u2028five", "one two three four five",
         "one\ntwo\tthree\nfour\nfive"),
        ("  spaced   out  ", "spaced out", "  spaced   out  "),
        ("\x00\x08\x0b\x0c\x0e\x1f\x7f\x80\x9f", "", ""),
    ],
)
def test_plain_text(raw: str, one_line: str, multiline: str) -> None:
    assert plain_text(raw) == one_line
    assert plain_text(raw, multiline=True) == multiline
    assert plain_text(plain_text(raw)) == plain_text(raw)


def test_a_hostile_card_imports_with_a_clean_name_and_description(tmp_path: Path) -> None:
    card = {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": HOSTILE, "description": f"A {HOSTILE} card.\x1b[2J",
                     "first_mes": "Hi!", "personality": "", "scenario": "",
                     "mes_example": "", "creator_notes": ""}}
    blob = json.dumps(card).encode()
    persona = card_to_persona(parse_card(blob), "eve")
    assert _clean(persona.name) and _clean(persona.description)
    assert persona.name == "]0;pwned[31mEve[0mgnp.exe2J Mallory"[:40]
    assert "Mallory" in persona.description and persona.description.startswith("A ]0;pwned")
    assert persona.system_prompt.startswith(f"You are {persona.name}.")
    source = tmp_path / "eve.json"
    source.write_bytes(blob)
    imported, written = import_card(source, tmp_path / "personas", taken_ids=())
    assert load_personas(tmp_path / "personas").get(imported.id).name == persona.name
    assert _clean(written.read_text(encoding="utf-8").split("[card]")[0])  # as shown


def test_a_lone_surrogate_in_a_card_name_is_dropped() -> None:
    blob = json.dumps({"name": "Eve\ud800", "description": "", "first_mes": "",
                       "personality": "", "scenario": "", "mes_example": ""}).encode()
    assert card_to_persona(parse_card(blob), "eve").name == "Eve"


def test_a_persona_file_is_cleaned_when_loaded(tmp_path: Path) -> None:
    path = tmp_path / "eve.toml"
    path.write_text('id = "eve"\nname = "\\u001b[5mEve\\u202e"\n'
                    'description = "Reads\\u2066 fine\\u0007\\nnow"\nsystem_prompt = "Hi."\n',
                    encoding="utf-8")
    persona = load_persona_file(path)
    assert persona.name == "[5mEve"
    assert persona.description == "Reads fine now"


def test_a_name_of_nothing_but_controls_is_refused() -> None:
    with pytest.raises(ValidationError, match="name"):
        Persona(id="x", name="\x1b\u202e\x07", system_prompt="Hi.")


def test_personas_list_prints_no_escape_sequences(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "personas"
    folder.mkdir(parents=True)
    (folder / "eve.toml").write_text(
        'id = "eve"\nname = "\\u001b]0;pwned\\u0007Eve\\u202e"\n'
        'description = "\\u001b[2J\\u009b2JWipes your screen"\nsystem_prompt = "Hi."\n',
        encoding="utf-8")
    env = {**os.environ, "HANASU_DATA_DIR": str(tmp_path / "data"),
           "HANASU_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-m", "app", "personas", "list"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "]0;pwnedEve" in done.stdout and "[2J2JWipes your screen" in done.stdout
    assert _clean(done.stdout) and _clean(done.stderr)
