"""``hanasu run`` on the app's data folder hears enrolled voices as the window does, and
says so on stderr; with none enrolled it says nothing and hears everyone."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.run import _enrolled_voices
from app.core.voice_gate import VoicePrint
from app.storage.voice_prints import VoicePrintStore


@pytest.fixture(autouse=True)
def _data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path / "data"))


def test_no_voice_enrolled_no_gate_and_no_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert _enrolled_voices("Aiko") == []
    assert capsys.readouterr().err == ""


def test_the_enrolled_voices_are_used_and_named(capsys: pytest.CaptureFixture[str]) -> None:
    alice = VoicePrint("Alice", tuple([1.0] + [0.0] * 255), 1.7e9, 21.0)
    VoicePrintStore().save(alice)
    assert _enrolled_voices("Aiko") == [alice]
    err = capsys.readouterr().err
    assert "enrolled voices: Alice" in err and 'say "Aiko"' in err
