"""The window runs the memory extraction on its pipeline, as the setting says: a fact the
user mentions in passing shows up in the persona's memories once the app is idle."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.pipeline import Engines, VoicePipeline
from app.personas.loader import PersonaLibrary
from app.storage.database import open_database
from app.storage.keeper import Keeper
from app.storage.settings import Settings
from app.ui.window import MainWindow
from tests.ui.conftest import Speaker, feed, utterance

FACT = "The user's sister is called Mei."


@pytest.mark.parametrize("setting", [None, False])
def test_the_window_extracts_a_fact_when_the_setting_allows(
        qtbot: QtBot, library: PersonaLibrary, tmp_path: Path, setting: bool | None) -> None:
    keeper = Keeper(open_database(tmp_path / "hanasu.db"))
    window = MainWindow(library, Settings(memory_extraction=setting), keeper=keeper)
    qtbot.addWidget(window)
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(["My sister is called Mei."]),
                      FakeLanguageModel(reply=FACT), FakeSynthesizer())
    pipeline = VoicePipeline(engines, window.persona.full_system_prompt())
    pipeline.add_observer(window.bridge.post)
    pipeline.add_observer(keeper.observer(pipeline))
    pipeline.start()
    window.attach_pipeline(pipeline)
    speaker = Speaker(pipeline, speed=4.0)
    conversations = window.conversations
    assert conversations is not None
    try:
        assert (conversations.extractor is not None) == (setting is None)
        with qtbot.waitSignal(window.bridge.playback_ended, timeout=15_000):
            feed(pipeline, *utterance())
        extractor = conversations.extractor
        if extractor is not None:
            qtbot.waitUntil(lambda: extractor.passes == 1, timeout=10_000)
        else:
            qtbot.wait(1500)  # time enough for a pass, had one been started
        keeper.flush()
        remembered = [m.text for m in keeper.memories.all(window.persona.id)]
        assert remembered == ([FACT.rstrip(".")] if setting is None else [])
    finally:
        speaker.stop()
        if conversations.extractor is not None:
            conversations.extractor.stop()
        window.detach_pipeline()
        pipeline.stop()
        window.shutdown()
        window.close()
        keeper.close()


@pytest.mark.parametrize("setting", [None, True, False])
def test_the_settings_dialog_shows_and_keeps_the_setting(
        qtbot: QtBot, setting: bool | None) -> None:
    from app.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(memory_extraction=setting), load_devices=False)
    qtbot.addWidget(dialog)
    assert dialog.memory_extraction.currentIndex() == [None, True, False].index(setting)
    assert dialog.memory_extraction.currentData() is setting
    assert dialog.collect().memory_extraction is setting
    dialog.memory_extraction.setCurrentIndex(dialog.memory_extraction.findData(False))
    assert dialog.collect().memory_extraction is False
