"""The built-in tools in a live conversation: a recognised request is answered by the
tool (the model is not asked), the answer is kept like any reply, a timer rings by itself
and still rings after a restart, and a reply nobody heard takes its timer back."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.cli.file_session import run_file
from app.core.events import TurnCancelled, TurnCommitted
from app.core.pipeline import Engines
from app.core.turn_commands import REOPENED
from app.personas import Persona
from app.storage.database import open_database
from app.storage.keeper import Keeper
from app.storage.notes import NoteStore
from app.storage.reminders import ReminderStore
from app.storage.tool_desk import ToolDesk
from app.tools.builtin import builtin_registry
from tests.pipeline.conftest import silence, voiced


def _run(db: Path, persona: Persona, said: list[str], seconds_after: float, gap: float = 3.5,
         ) -> tuple[FakeLanguageModel, FakeSynthesizer]:
    llm = FakeLanguageModel(reply="The sea is wide and deep.")
    tts = FakeSynthesizer()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(said), llm, tts)
    parts = [silence(0.5)]
    for _ in said:
        parts += [voiced(1.0), silence(gap)]  # the answer plays to its end
    audio = np.concatenate([*parts, silence(seconds_after)])
    keeper = Keeper(open_database(db))
    try:
        result = run_file(engines, persona, audio, keeper=keeper, max_wait_s=20)
    finally:
        keeper.close()
    assert not result.failures, result.failures
    return llm, tts


def _heard(db: Path, persona: Persona) -> list[tuple[str, str]]:
    keeper = Keeper(open_database(db))
    try:
        _, exchanges = keeper.resume(persona.id)
    finally:
        keeper.close()
    return [(e.user_text, e.heard_text) for e in exchanges]


def test_a_timer_is_set_without_the_model_and_rings_by_itself(
        tmp_path: Path, persona: Persona) -> None:
    db = tmp_path / "hanasu.db"
    llm, tts = _run(db, persona, ["Set a timer for three seconds.",
                                  "Tell me about the sea."], seconds_after=3.0, gap=7.0)
    assert len(llm.prompts) == 1  # only the question about the sea reached the model
    assert llm.prompts[0][-1].content.endswith("Tell me about the sea.")
    assert "Timer set for three seconds." in tts.texts
    assert "Your three second timer is done." in tts.texts
    assert tts.texts.index("Your three second timer is done.") > tts.texts.index(
        "Timer set for three seconds.")
    heard = _heard(db, persona)
    assert heard[0] == ("Set a timer for three seconds.", "Timer set for three seconds.")
    # said first, so kept like any reply: no words of the user's, roles still alternate
    assert ("", "Your three second timer is done.") in heard
    keeper = Keeper(open_database(db))
    try:
        assert ReminderStore(keeper.db).pending() == []  # rung once, not again
    finally:
        keeper.close()


def test_a_timer_set_in_one_run_rings_in_the_next(tmp_path: Path, persona: Persona) -> None:
    db = tmp_path / "hanasu.db"
    _, first = _run(db, persona, ["Set a timer for eight seconds."], seconds_after=0.5)
    assert "Timer set for eight seconds." in first.texts
    assert not any("done" in text for text in first.texts)  # it ended before the timer
    time.sleep(1.0)
    _, second = _run(db, persona, [], seconds_after=9.0)  # a restart, nobody speaking
    assert "Your eight second timer is done." in second.texts
    assert _heard(db, persona)[-1] == ("", "Your eight second timer is done.")


def _desk(tmp_path: Path) -> tuple[ToolDesk, ReminderStore, Keeper]:
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    reminders = ReminderStore(keeper.db)
    return ToolDesk(builtin_registry(reminders, NoteStore(keeper.db)), reminders), reminders, keeper


def test_a_reply_nobody_heard_takes_its_timer_back(tmp_path: Path) -> None:
    """"Set a timer for five minutes" ... (the user goes on) "...for the pasta": the first
    reply was cut before it was heard, so only the finished request's timer stays; a reply
    talked over was cut after the timer was set, and it stays."""
    desk, reminders, keeper = _desk(tmp_path)
    try:
        assert desk.reply(7, "Set a timer for five minutes", "en")
        assert len(reminders.pending()) == 1
        desk.observe(TurnCancelled(7, 1.0, REOPENED))
        assert reminders.pending() == []
        assert desk.reply(8, "Set a timer for five minutes for the pasta", "en")
        desk.observe(TurnCommitted(8, "Set a timer for five minutes for the pasta",
                                   "Timer set.", None))
        desk.observe(TurnCancelled(8, 2.0, REOPENED))  # already kept: nothing to take back
        assert len(reminders.pending()) == 1
        assert desk.reply(9, "Set a timer for one minute", "en")
        desk.observe(TurnCancelled(9, 3.0, "barge-in"))
        assert len(reminders.pending()) == 2
    finally:
        keeper.close()


def test_ordinary_talk_goes_to_the_model_and_arithmetic_is_exact(tmp_path: Path) -> None:
    desk, _, keeper = _desk(tmp_path)
    try:
        assert desk.reply(1, "I set the table for five people.", "en") is None
        assert desk.reply(2, "What is seventeen times twenty three?", "en") == "That's 391."
        set_in_japanese = desk.reply(3, "5分のタイマーをセットして", "ja")
        assert set_in_japanese == "五分のタイマーをセットしました。"
        said: list[str] = []
        assert desk.ring_due(said.append, time.time() + 301) == 1
        assert said == ["五分のタイマーが終わりました。"]
        assert desk.ring_due(said.append, time.time() + 400) == 0
    finally:
        keeper.close()
