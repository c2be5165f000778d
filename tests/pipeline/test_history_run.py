"""`hanasu run` keeps the conversation across runs (the same store as the app)."""

from __future__ import annotations

import itertools
import json
import os
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
from app.cli.file_session import run_file
from app.core.memory_intents import MEMORY_HEADER
from app.core.pipeline import Engines
from app.personas import Persona
from app.storage.database import open_database
from app.storage.history import Exchange
from app.storage.keeper import Keeper
from tests.pipeline.conftest import silence, voiced

REPO = Path(__file__).resolve().parents[2]


def _engines(said: str) -> tuple[Engines, FakeLanguageModel]:
    llm = FakeLanguageModel(reply="Lovely to hear from you again.")
    return Engines(FakeVoiceActivity(), FakeRecognizer([said]), llm, FakeSynthesizer()), llm


def _question() -> np.ndarray:
    return np.concatenate([silence(0.5), voiced(1.0), silence(1.0)])


def _run(tmp_path: Path, persona: Persona, said: str, new: bool = False) -> FakeLanguageModel:
    engines, llm = _engines(said)
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    try:
        result = run_file(engines, persona, _question(), keeper=keeper, new_conversation=new)
    finally:
        keeper.close()
    assert len(result.turns) == 1
    return llm


def test_the_second_run_continues_the_first_runs_conversation(
        tmp_path: Path, persona: Persona) -> None:
    _run(tmp_path, persona, "My name is Aiko and I love hiking.")
    llm = _run(tmp_path, persona, "What did I just tell you?")
    [prompt] = llm.prompts
    contents = [(m.role, m.content) for m in prompt]
    assert contents[0] == ("system", persona.full_system_prompt())
    assert contents[1] == ("user", "My name is Aiko and I love hiking.")
    assert contents[2] == ("assistant", "Lovely to hear from you again.")
    assert contents[3][1].endswith("What did I just tell you?")

    fresh = _run(tmp_path, persona, "Hello?", new=True)
    assert [m.role for m in fresh.prompts[0]] == ["system", "user"]


def test_a_remembered_fact_is_in_a_later_runs_prompt(tmp_path: Path, persona: Persona) -> None:
    _run(tmp_path, persona, "Remember that my sister is called Mei.")
    llm = _run(tmp_path, persona, "How is my sister doing, do you think?", new=True)
    last = llm.prompts[0][-1]
    assert last.role == "user" and last.content.startswith(MEMORY_HEADER)
    assert "- My sister is called Mei" in last.content
    assert last.content.endswith("How is my sister doing, do you think?")
    assert llm.prompts[0][0].content == persona.full_system_prompt()  # prefix untouched


def _cli(tmp_path: Path, *extra: str) -> dict[str, object]:
    wav, out, timeline = tmp_path / "q.wav", tmp_path / "out.wav", tmp_path / "t.json"
    soundfile.write(wav, _question(), 16_000)
    env = {**os.environ, "HANASU_DATA_DIR": str(tmp_path / "data"),
           "HANASU_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run(
        [sys.executable, "-m", "app", "run", "--fake-engines", "--input", str(wav),
         "--output", str(out), "--timeline", str(timeline), *extra],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(timeline.read_text())
    assert isinstance(data, dict)
    return data


def _prompt_tokens(data: dict[str, object]) -> int:
    turns = data["turns"]
    assert isinstance(turns, list) and len(turns) == 1
    return int(turns[0]["prompt_tokens"])


@pytest.mark.slow
def test_python_m_app_run_continues_across_runs(tmp_path: Path) -> None:
    first = _prompt_tokens(_cli(tmp_path))
    second = _prompt_tokens(_cli(tmp_path))  # the first exchange is in the prompt now
    assert second > first + 50
    fresh = _prompt_tokens(_cli(tmp_path, "--new-conversation"))
    assert fresh == first
    db = tmp_path / "data" / "hanasu.db"
    keeper = Keeper(open_database(db))
    conversations = keeper.history.conversations("hana")
    keeper.close()
    assert sorted(c.exchange_count for c in conversations) == [1, 2]
    size = db.stat().st_size
    nothing = _prompt_tokens(_cli(tmp_path, "--no-history"))
    assert nothing == first  # nothing resumed...
    keeper = Keeper(open_database(db))
    assert sorted(c.exchange_count for c in keeper.history.conversations("hana")) == [1, 2]
    keeper.close()  # ...and nothing written
    assert db.stat().st_size == size


class _SmallContextModel(FakeLanguageModel):
    """A fake model whose context leaves 900 prompt tokens (history budget 1000 chars)."""

    def prompt_budget(self) -> int:
        return 900


def test_a_long_history_is_dropped_in_blocks_and_the_timeline_shows_it(
        tmp_path: Path, persona: Persona) -> None:
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    key, _ = keeper.resume(persona.id)
    for i in range(14):  # 14 x ~64 chars: the 1000-char budget is nearly full
        keeper.history.add_exchange(persona.id, key.conversation_id, _exchange(i))
    said = [f"Question number {i} about the weather." for i in range(8)]
    llm = _SmallContextModel(reply="Sunny with a light breeze today.")
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(said), llm, FakeSynthesizer())
    audio = np.concatenate([silence(0.5)] + [np.concatenate([voiced(0.8), silence(1.2)])
                                             for _ in said])
    try:
        result = run_file(engines, persona, audio, keeper=keeper)
    finally:
        keeper.close()
    turns = result.turns
    assert len(turns) == len(said)
    cold = [t.turn_id for prev, t in itertools.pairwise(turns)
            if (t.reused_tokens or 0) < (prev.prompt_tokens or 0)]
    # one block drop (a quarter of the budget, ~4 exchanges) in 8 turns; every other turn
    # reuses the whole previous prompt
    assert len(cold) == 1, [(t.prompt_tokens, t.reused_tokens) for t in turns]
    assert len(llm.prompts[-1]) < len(llm.prompts[0]) + 2 * (len(said) - 1)


def _exchange(i: int) -> Exchange:
    return Exchange(f"Old question {i:02d} " + "q" * 12, f"Old answer {i:02d} " + "a" * 14,
                    committed_at=float(i))
