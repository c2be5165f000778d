"""One "error as one line" helper, shared by adapters and storage."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app import errors
from app.adapters import errors as adapter_errors
from app.errors import first_line
from app.storage.safe_read import UserFileError, parse_json

APP = Path(errors.__file__).resolve().parent


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (ValueError("bad value\n  at line 3\n  context"), "bad value"),
        (RuntimeError("\n\n  server said no  \nbody"), "server said no"),
        (OSError(""), "OSError"),
        (TimeoutError("   \n \n"), "TimeoutError"),
        (
            json.JSONDecodeError("Expecting value", "x", 0),
            "Expecting value: line 1 column 1 (char 0)",
        ),
    ],
)
def test_first_line(exc: BaseException, line: str) -> None:
    assert first_line(exc) == line


def test_adapters_and_storage_share_it() -> None:
    assert adapter_errors.first_line is first_line
    with pytest.raises(UserFileError, match=r"^it is not valid JSON \(Expecting") as caught:
        parse_json("{\n")
    assert "\n" not in str(caught.value)


def test_no_private_copies() -> None:
    """Nobody in app/ re-implements it (the copies had drifted: one stripped, two did not)."""
    copy = re.compile(r"def _?first_line|str\(\w+\)(\.strip\(\))?\.splitlines\(\)")
    copies = [
        str(p.relative_to(APP))
        for p in APP.rglob("*.py")
        if p.name != "errors.py" and copy.search(p.read_text(encoding="utf-8"))
    ]
    assert copies == []
