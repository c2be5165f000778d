"""`hanasu run` with the real embedded models, twice: the second run continues the first
conversation, and its history was evaluated before the user spoke (reused, not re-read)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.turn_commands import REOPENED
from app.storage.database import open_database
from app.storage.keeper import Keeper

REPO = Path(__file__).resolve().parents[2]


def _speak(path: Path, text: str) -> None:
    raw = path.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "140", "-w", str(raw), text], check=True)
    subprocess.run(["sox", str(raw), str(path), "pad", "0.5", "1.0"], check=True)


def _run(tmp_path: Path, name: str, text: str) -> dict[str, object]:
    question, timeline = tmp_path / f"{name}.wav", tmp_path / f"{name}.json"
    _speak(question, text)
    env = {**os.environ, "HANASU_DATA_DIR": str(tmp_path / "data"),
           "HANASU_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run(
        [sys.executable, "-m", "app", "run", "--input", str(question),
         "--output", str(tmp_path / f"{name}-reply.wav"), "--timeline", str(timeline)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    *reopened, turn = json.loads(timeline.read_text())["turns"]
    # "Hello," and a 0.2 s breath may be taken for a finished turn; the user going on
    # reopens it before any of its reply is heard, and the words join the next turn
    assert all(t["cancelled"] == REOPENED and not t["heard_text"]
               for t in reopened), reopened
    assert isinstance(turn, dict) and turn["heard_text"], turn
    return turn


@pytest.mark.slow
def test_real_app_run_continues_the_conversation_warm(tmp_path: Path) -> None:
    first = _run(tmp_path, "first", "Hello, my name is Aiko and I love hiking.")
    second = _run(tmp_path, "second", "What do I love doing?")
    first_tokens, second_tokens = int(first["prompt_tokens"]), int(second["prompt_tokens"])
    # the first exchange (question and heard reply) is in the second run's prompt...
    assert second_tokens > first_tokens + 10
    # ...and it was evaluated in the background before the user spoke: everything up to
    # the new question came from the cache
    assert int(second["reused_tokens"]) >= first_tokens
    keeper = Keeper(open_database(tmp_path / "data" / "hanasu.db"))
    [conversation] = keeper.history.conversations("hana")
    exchanges = keeper.history.exchanges(conversation.id)
    keeper.close()
    assert [e.user_text for e in exchanges] == [first["transcript"], second["transcript"]]
    assert exchanges[1].heard_text == second["heard_text"]
    assert exchanges[1].timings["voice_to_voice"] == second["voice_to_voice"]
