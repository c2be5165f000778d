"""Conversations, memories and the log are the user's alone: 0700 folders, 0600 files, and
the user's words never in the log at INFO or above."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.cli.run import _log_turns, run_file
from app.core.pipeline import Engines
from app.personas import load_personas
from app.storage.database import open_database
from app.storage.keeper import Keeper
from tests.pipeline.conftest import silence, voiced

REPO = Path(__file__).resolve().parents[2]
SAID = "my neighbour Ilse keeps bees"
REPLY = "Bees are wonderful company indeed"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _question() -> np.ndarray:
    return np.concatenate([silence(0.5), voiced(1.0), silence(1.2)])


def test_a_run_leaves_its_data_and_log_owner_only_even_those_made_readable_before(
        tmp_path: Path) -> None:
    data, log_dir = tmp_path / "data", tmp_path / "log"
    open_database(data / "hanasu.db")
    for folder in (data, log_dir):  # as an earlier version left them
        folder.mkdir(exist_ok=True)
        os.chmod(folder, 0o755)
    (log_dir / "hanasu.log").write_text("old line\n")
    for old in (data / "hanasu.db", log_dir / "hanasu.log"):
        os.chmod(old, 0o644)
    fresh = tmp_path / "fresh"  # and a first run: everything created private
    wav, out = tmp_path / "q.wav", tmp_path / "out.wav"
    soundfile.write(wav, _question(), 16_000)
    for data_dir, logs in ((data, log_dir), (fresh / "data", fresh / "log")):
        env = {**os.environ, "HANASU_DATA_DIR": str(data_dir), "HANASU_LOG_DIR": str(logs),
               "HANASU_CONFIG_DIR": str(tmp_path / "config"), "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            [sys.executable, "-m", "app", "run", "--fake-engines", "--input", str(wav),
             "--output", str(out)], cwd=REPO, env=env, capture_output=True, text=True,
            timeout=120, check=False, preexec_fn=lambda: os.umask(0o022))
        assert done.returncode == 0, done.stderr
        assert _mode(data_dir) == 0o700 and _mode(logs) == 0o700
        files = [p for folder in (data_dir, logs) for p in folder.iterdir() if p.is_file()]
        assert {p.name for p in files} >= {"hanasu.db", "hanasu.log"}
        assert {p.name: _mode(p) for p in files} == {p.name: 0o600 for p in files}
        keeper = Keeper(open_database(data_dir / "hanasu.db"))
        assert keeper.history.conversations("hana")  # the run's exchange was saved
        keeper.close()
        text = (logs / "hanasu.log").read_text()
        assert "voice-to-voice" in text  # the run's INFO lines are there...
        assert "Hello, who are you?" not in text  # ...without the user's words


def test_the_users_and_the_replys_words_are_not_logged_at_info(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engines = Engines(FakeVoiceActivity(), FakeRecognizer([SAID]),
                      FakeLanguageModel(reply=REPLY), FakeSynthesizer())
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    with caplog.at_level(logging.DEBUG):
        try:
            result = run_file(engines, load_personas().default, _question(), keeper=keeper)
        finally:
            keeper.close()
        _log_turns(result)
    assert len(result.turns) == 1
    loud = "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)
    quiet = "\n".join(r.getMessage() for r in caplog.records if r.levelno < logging.INFO)
    assert "voice-to-voice" in loud
    for words in (SAID, REPLY, "Ilse", "wonderful"):
        assert words not in loud
    assert SAID in quiet  # still there for -v
