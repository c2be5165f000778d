"""The shared reader for user files: size and nesting are capped before any parser runs,
and nothing but UserFileError ever comes out, whatever the bytes."""

from __future__ import annotations

import contextlib
import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.storage.safe_read import (
    UnreadableFileError,
    UserFileError,
    check_nesting,
    load_json,
    load_toml,
    parse_json,
    parse_toml,
    read_text,
)

DEEP = 5_000
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("text", [
    "[" * DEEP + "]" * DEEP,
    '{"a":' * DEEP + "1" + "}" * DEEP,
    "[" * DEEP,  # unterminated as well
])
def test_deep_json_is_refused_before_parsing(text: str) -> None:
    with pytest.raises(UserFileError, match="nested more than 32 levels"):
        parse_json(text)


@pytest.mark.parametrize("text", [
    "a = " + "[" * DEEP + "]" * DEEP,
    "a = " + "{b = " * DEEP + "1" + "}" * DEEP,
    "a" + ".a" * DEEP + " = 1",  # dotted keys nest without a single bracket
    "[" + "a." * DEEP + "a]\nx = 1",
])
def test_deep_toml_is_refused_before_parsing(text: str) -> None:
    with pytest.raises(UserFileError, match="more than 32"):
        parse_toml(text)


def test_brackets_and_dots_inside_strings_and_comments_do_not_count() -> None:
    text = ('x = """ [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ \\""" "" """\n'
            "y = '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['\n"
            "# {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\n"
            'z = "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g"\n'
            "f = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5,"
            " 15.5, 16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5, 24.5, 25.5, 26.5, 27.5,"
            " 28.5, 29.5, 30.5, 31.5, 32.5, 33.5]\n")
    assert parse_toml(text)["f"][-1] == 33.5
    assert parse_json('{"a": "]]]]]]]]]]]]]][[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\""}') == {
        "a": "]]]]]]]]]]]]]][[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\""}


def test_a_huge_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(1 << 30)  # 1 GiB, sparse
    with pytest.raises(UserFileError, match="larger than 1 MiB"):
        load_json(big)


def test_unreadable_files_are_their_own_kind(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFileError, match="does not exist"):
        read_text(tmp_path / "nope")
    with pytest.raises(UnreadableFileError, match="not a regular file"):
        read_text(tmp_path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'name = "Ren\xe9e"\n')
    with pytest.raises(UserFileError, match="not UTF-8 text"):
        load_toml(path)


@FUZZ
@given(st.binary(max_size=4096))
def test_any_bytes_give_a_value_or_user_file_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz"
    path.write_bytes(data)
    for load in (load_json, load_toml):
        with contextlib.suppress(UserFileError):
            load(path)


_nested = st.recursive(
    st.one_of(st.integers(), st.text(max_size=5), st.booleans()),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=40,
)


@FUZZ
@given(_nested, st.integers(min_value=1, max_value=3000))
def test_any_nesting_gives_a_value_or_user_file_error(value: object, extra: int) -> None:
    text = "[" * extra + json.dumps(value) + "]" * extra
    try:
        parsed = parse_json(text)
    except UserFileError:
        assert extra > 20
    else:
        assert parsed is not None


@FUZZ
@given(st.text(alphabet='[]{}"\'#.=,\n ab1\\', max_size=3000))
def test_bracket_soup_never_escapes_as_anything_else(text: str) -> None:
    for parse in (parse_json, parse_toml):
        with contextlib.suppress(UserFileError):
            parse(text)


def test_valid_files_parse_as_the_stdlib_would() -> None:
    text = '[voice]\nkokoro = "af_heart"\n[avatar]\nskin = "#aabbcc"\n'
    assert parse_toml(text) == tomllib.loads(text)
    check_nesting(text, "toml", 3)
