"""``hanasu personas list | import FILE | export ID FILE | validate FILE``.

The same persona library the app uses (built-ins plus the user's folder). ``import`` takes
a character card (PNG or JSON) or a persona TOML file and writes it into the user's folder;
``export`` writes a card PNG, a V3 card JSON or a persona TOML, chosen by the file's
extension; ``validate`` checks a persona or card file without changing anything. Every
problem is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.personas.card_export import card_json, export_card_png
from app.personas.card_file import CardError, read_card
from app.personas.cards import card_to_persona, slug
from app.personas.cards import import_card as import_card_file
from app.personas.loader import (
    PersonaLibrary,
    load_persona_file,
    load_persona_library,
    user_personas_dir,
)
from app.personas.model import Persona
from app.personas.writer import PersonaSaveError, persona_path, persona_to_toml, save_persona
from app.storage.safe_read import MIB

CARD_SUFFIXES = (".png", ".json")


class PersonaCliError(Exception):
    """One line for stderr."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hanasu personas",
                                     description="List, import, export and check personas.")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("list", help="the personas the app shows, and any file it skipped")
    imp = sub.add_parser("import", help="a character card (PNG/JSON) or persona TOML")
    imp.add_argument("file", type=Path)
    exp = sub.add_parser("export", help="as a card PNG, card JSON or persona TOML")
    exp.add_argument("id")
    exp.add_argument("file", type=Path)
    val = sub.add_parser("validate", help="check a persona TOML or character card")
    val.add_argument("file", type=Path)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.action == "list":
            return list_personas()
        if args.action == "import":
            return import_file(args.file)
        if args.action == "export":
            return export(args.id, args.file)
        return validate(args.file)
    except (PersonaCliError, CardError, PersonaSaveError, ValueError) as exc:
        print(f"hanasu personas: {exc}", file=sys.stderr)
        return 1


def _library() -> PersonaLibrary:
    return load_persona_library()


def list_personas() -> int:
    library = _library()
    width = max(len(p.id) for p in library.personas)
    for persona in library.personas:
        where = "built-in" if library.is_builtin(persona.id) else str(
            library.sources.get(persona.id, ""))
        print(f"{persona.id:<{width}}  {persona.name}  [{persona.voice.kokoro}]  {where}")
        if persona.description:
            print(f"{'':<{width}}  {persona.description}")
    for message in library.messages:
        print(f"note: {message}", file=sys.stderr)
    return 0


def _is_card(path: Path) -> bool:
    return path.suffix.lower() in CARD_SUFFIXES


def import_file(path: Path) -> int:
    library = _library()
    folder = user_personas_dir()
    taken = {p.id for p in library.personas}
    if _is_card(path):
        persona, written = import_card_file(path, folder, taken)
    else:
        persona = load_persona_file(path)
        if persona.id in taken:
            raise PersonaCliError(f"a persona with id {persona.id!r} exists already; "
                                  "change the id in the file first")
        if persona.avatar.image:  # a picture next to someone else's file: not copied
            persona = persona.model_copy(update={
                "avatar": persona.avatar.model_copy(update={"image": None})})
        written = save_persona(persona, folder)
    print(f"Imported {persona.name} as {persona.id!r}: {written}")
    return 0


def export(persona_id: str, target: Path) -> int:
    library = _library()
    try:
        persona = library.get(persona_id)
    except KeyError as exc:
        raise PersonaCliError(str(exc.args[0])) from exc
    suffix = target.suffix.lower()
    if suffix == ".png":
        image = library.image_path(persona)
        picture = None
        if image is not None and image.suffix.lower() == ".png" and image.is_file() \
                and image.stat().st_size <= 20 * MIB:
            picture = image.read_bytes()
        try:
            blob = export_card_png(persona, picture)
        except CardError:  # the picture is not a usable PNG: the drawn badge instead
            blob = export_card_png(persona, None)
    elif suffix == ".json":
        blob = (json.dumps(card_json(persona, 3), ensure_ascii=False, indent=2) + "\n").encode()
    elif suffix == ".toml":
        blob = persona_to_toml(persona).encode()
    else:
        raise PersonaCliError(f"{target.name}: use .png (card), .json (card) or .toml (persona)")
    try:
        target.write_bytes(blob)
    except OSError as exc:
        raise PersonaCliError(f"cannot write {target}: {exc.strerror or exc}") from exc
    print(f"Exported {persona.id!r} to {target}")
    return 0


def validate(path: Path) -> int:
    persona: Persona
    if _is_card(path):
        card = read_card(path)
        name = card.data.get("name")
        persona_id = slug(name) if isinstance(name, str) else "card"
        persona = card_to_persona(card, persona_id, "card.png" if card.image_png else None)
        kind = card.spec.replace("chara_card_", "character card ")
    else:
        persona = load_persona_file(path)
        kind = "persona"
    print(f"OK: {path} is a valid {kind} ({persona.name}; prompt "
          f"{len(persona.system_prompt):,} characters; would be saved as "
          f"{persona_path(user_personas_dir(), persona.id).name})")
    return 0
