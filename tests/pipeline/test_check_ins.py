"""Speaking first after a long silence: a persona with check-ins on asks the model for one
line in character once the room has been quiet long enough, says it into the silence and
keeps it in the history; a persona without them never speaks first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.cli.file_session import run_file
from app.core.pipeline import Engines
from app.personas import Persona
from app.personas.check_in import CheckInSettings
from app.storage import check_ins
from app.storage.check_ins import spoken_line
from app.storage.database import open_database
from app.storage.keeper import Keeper
from tests.pipeline.conftest import silence, voiced


def _conversation(tmp_path: Path, persona: Persona, quiet_s: float,
                  ) -> tuple[FakeLanguageModel, FakeSynthesizer, list[tuple[str, str]]]:
    llm = FakeLanguageModel(reply=["The sea is wide and deep.",
                                   "[happy] Still thinking about the sea? *smiles*"])
    tts = FakeSynthesizer()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(["Tell me about the sea."]), llm, tts)
    audio = np.concatenate([silence(0.5), voiced(1.0), silence(quiet_s)])
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    try:
        run_file(engines, persona, audio, keeper=keeper, max_wait_s=10)
        _, exchanges = keeper.resume(persona.id)
    finally:
        keeper.close()
    return llm, tts, [(e.user_text, e.heard_text) for e in exchanges]


def test_after_a_long_silence_the_persona_checks_in_once(
        tmp_path: Path, persona: Persona, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_ins, "POLL_S", 0.25)
    chatty = persona.model_copy(update={"checkin": CheckInSettings(
        after_minutes=0.05, every_minutes=10)})  # 3 s of quiet; then not again for 10 min
    llm, tts, heard = _conversation(tmp_path, chatty, quiet_s=9.0)
    assert len(llm.prompts) == 2  # the reply, then one check-in however long the quiet
    assert llm.prompts[1][-1].content.startswith("(The user has been quiet")
    assert llm.prompts[1][-3].content == "Tell me about the sea."  # with the conversation
    assert "Still thinking about the sea?" in tts.texts  # the tag and the aside not said
    assert heard == [("Tell me about the sea.", "The sea is wide and deep."),
                     ("", "Still thinking about the sea?")]


def test_without_check_ins_it_never_speaks_first(
        tmp_path: Path, persona: Persona, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_ins, "POLL_S", 0.25)
    assert persona.checkin.after_minutes is None  # off unless the persona turns it on
    llm, _, heard = _conversation(tmp_path, persona, quiet_s=6.0)
    assert len(llm.prompts) == 1 and len(heard) == 1


def test_a_check_in_is_only_what_a_listener_should_hear() -> None:
    assert spoken_line("**Hey!** Still up? As an AI, I cannot feel.") == "Hey! Still up?"
    assert spoken_line("*waves*") == ""
    assert len(spoken_line("Hello there. " * 100)) <= check_ins.MAX_CHARS
