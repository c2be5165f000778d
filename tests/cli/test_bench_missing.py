"""``hanasu bench`` where the bench/ package is absent (a wheel or the bundle): one line
saying how to get it, exit 2; and with it (a checkout) the benchmarks' subparsers are on the
app's one argparse tree."""

from __future__ import annotations

import importlib
import sys

import pytest

import app.__main__ as entry


def _hide_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def fake(name: str, package: str | None = None) -> object:
        if name == "bench" or name.startswith("bench."):
            raise ModuleNotFoundError(f"No module named {name!r}", name="bench")
        return real(name, package)

    monkeypatch.setattr(entry.importlib, "import_module", fake)


@pytest.mark.parametrize("argv", [["bench"], ["bench", "ui", "--help"], ["bench", "--count", "2"]])
def test_bench_without_the_package_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    _hide_bench(monkeypatch)
    assert entry.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"hanasu: {entry.BENCH_MISSING}"]
    assert "source checkout" in err[0] and "tests/setup.sh" in err[0]


def test_other_commands_parse_without_the_bench_package(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide_bench(monkeypatch)
    args = entry.build_parser(["run"]).parse_args(["run", "--input", "a.wav", "--output", "b.wav"])
    assert args.command == "run"


def test_bench_subcommands_register_on_the_one_tree() -> None:
    parser = entry.build_parser(["bench", "turns"])
    args = parser.parse_args(["bench", "turns"])
    assert args.command == "bench" and args.bench_command == "turns"
    from bench import turns

    assert args.bench_main is turns.main
    plain = entry.build_parser(["bench"]).parse_args(["bench", "--count", "3", "--fake-engines"])
    from bench import latency

    assert plain.bench_command is None and plain.bench_main is latency.main
    assert plain.count == 3 and plain.fake_engines


def test_bench_help_lists_every_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        entry.main(["bench", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    from bench.commands import SUBCOMMANDS

    assert all(name in out for name in SUBCOMMANDS)
    assert "bench" in sys.modules
