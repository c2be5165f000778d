"""Checks a tool's arguments against its JSON Schema: the subset tools declare here.

Supported: ``type`` (object, string, integer, number, boolean, array, null, or a list of
them), ``properties``, ``required``, ``additionalProperties: false``, ``enum``,
``minimum``/``maximum``, ``minLength``/``maxLength``, ``items``, ``maxItems``. Any other
keyword is ignored (accepted), so a richer schema never rejects a valid call; the tool
still checks what it relies on. No dependency: the built-in schemas use only this subset.
"""

from __future__ import annotations

from collections.abc import Mapping

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "string": (str,), "integer": (int,), "number": (int, float),
    "boolean": (bool,), "array": (list, tuple), "null": (type(None),),
}


def _is_type(value: object, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False  # JSON true is not 1
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def errors(schema: Mapping[str, object], value: object, where: str = "arguments") -> list[str]:
    """What is wrong with ``value`` under ``schema``, one short line each ([] when valid)."""
    found: list[str] = []
    wanted = schema.get("type")
    names = [wanted] if isinstance(wanted, str) else wanted if isinstance(wanted, list) else []
    if names and not any(_is_type(value, str(n)) for n in names):
        return [f"{where} should be {' or '.join(str(n) for n in names)}"]
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        found.append(f"{where} should be one of {', '.join(repr(e) for e in enum)}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        low, high = schema.get("minimum"), schema.get("maximum")
        if isinstance(low, int | float) and value < low:
            found.append(f"{where} should be at least {low}")
        if isinstance(high, int | float) and value > high:
            found.append(f"{where} should be at most {high}")
    if isinstance(value, str):
        shortest, longest = schema.get("minLength"), schema.get("maxLength")
        if isinstance(shortest, int) and len(value) < shortest:
            found.append(f"{where} should have at least {shortest} characters")
        if isinstance(longest, int) and len(value) > longest:
            found.append(f"{where} should have at most {longest} characters")
    if isinstance(value, list | tuple):
        most, items = schema.get("maxItems"), schema.get("items")
        if isinstance(most, int) and len(value) > most:
            found.append(f"{where} should have at most {most} items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                found += errors(items, item, f"{where}[{i}]")
    if isinstance(value, dict):
        found += _object_errors(schema, value, where)
    return found


def _object_errors(schema: Mapping[str, object], value: dict[object, object],
                   where: str) -> list[str]:
    found: list[str] = []
    properties = schema.get("properties")
    props = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else []:
        if name not in value:
            found.append(f"{where} lacks {name!r}")
    for key, item in value.items():
        sub = props.get(key)
        if isinstance(sub, Mapping):
            found += errors(sub, item, f"{key!s}")
        elif schema.get("additionalProperties") is False:
            found.append(f"{where} has an unknown field {key!r}")
    return found
