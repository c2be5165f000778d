"""Hanasu → Voices: enrol a voice by reading (from a file here, the microphone in the app),
see who is enrolled, when and from how much speech, delete it (the file goes); while a
voice is read in, the companion does not take the reading for a request."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.adapters.fakes import FakeSpeakerEncoder
from app.core.events import FloatAudio, TurnStarted
from app.core.pipeline import VoicePipeline
from app.core.voice_gate import VoicePrint
from app.storage.voice_prints import VoicePrintStore
from app.ui.dialogs import DialogLauncher
from app.ui.keyboard import interactive_widgets
from app.ui.session import Running, Session
from app.ui.voices_dialog import TARGET_SPEECH_S, MicrophoneSource, VoicesDialog
from app.ui.window import MainWindow
from tests.ui.conftest import Microphone, Speaker, fake_engines, silence, tone

RATE = 16_000


class FileSource:
    """A reading from a file, a tenth of a second per look (the dialog polls every 0.1 s,
    so it runs at about real time)."""

    def __init__(self, audio: FloatAudio, speed: float = 1.0) -> None:
        self.audio, self.position = audio, 0
        self.step = int(RATE * 0.1 * speed)
        self.started = self.stopped = False

    def start(self) -> None:
        self.started = True

    def take(self) -> FloatAudio:
        piece = self.audio[self.position:self.position + self.step]
        self.position += self.step
        return piece

    def stop(self) -> None:
        self.stopped = True


def dialog_for(qtbot: QtBot, store: VoicePrintStore, source: FileSource | None,
               changes: list[list[str]]) -> VoicesDialog:
    def changed(prints: Sequence[VoicePrint]) -> None:
        changes.append([p.name for p in prints])

    dialog = VoicesDialog(store, FakeSpeakerEncoder(), (lambda: source) if source else None,
                          changed, "Aiko")
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def listed(dialog: VoicesDialog) -> list[str]:
    return [dialog.list.item(i).text() for i in range(dialog.list.count())]


def test_a_reading_enrols_a_voice_that_is_listed_then_deleted(
        qtbot: QtBot, tmp_path: Path) -> None:
    store, changes = VoicePrintStore(tmp_path / "voices"), []
    source = FileSource(tone(20.0, hz=180.0), speed=4.0)  # 4x real time
    dialog = dialog_for(qtbot, store, source, changes)
    assert listed(dialog) == [] and dialog.empty.isVisible()
    assert not dialog.finish_button.isEnabled()
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert not source.started and "name" in dialog.status.text()  # a name first
    dialog.name_edit.setText("Alice")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert source.started and dialog.sentences.isVisible() and dialog.finish_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 5, timeout=5000)
    qtbot.waitUntil(lambda: changes == [["Alice"]], timeout=10_000)  # stops at the target
    assert source.stopped and not dialog.sentences.isVisible()
    [line] = listed(dialog)
    assert line.startswith("Alice — enrolled ") and line.endswith(" s of speech")
    assert TARGET_SPEECH_S <= float(line.split("from ")[1].split()[0]) <= TARGET_SPEECH_S + 1
    [voice] = store.all()
    assert voice.embedding == tuple(map(float, FakeSpeakerEncoder().embed(tone(1, hz=180))))
    assert dialog.status.text() == "Alice's voice is enrolled."

    [file] = list((tmp_path / "voices").iterdir())
    dialog.list.setCurrentRow(0)
    qtbot.mouseClick(dialog.delete_button, Qt.MouseButton.LeftButton)
    assert not file.exists() and store.all() == [] and changes[-1] == []
    assert listed(dialog) == [] and dialog.empty.isVisible()


def test_too_little_speech_is_not_enrolled(qtbot: QtBot, tmp_path: Path) -> None:
    store, changes = VoicePrintStore(tmp_path), []
    source = FileSource(np.concatenate([tone(2.0), silence(5.0)]), speed=4.0)
    dialog = dialog_for(qtbot, store, source, changes)
    dialog.name_edit.setText("Bo")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: source.position > source.audio.size, timeout=5000)
    qtbot.mouseClick(dialog.finish_button, Qt.MouseButton.LeftButton)
    assert "Too little speech" in dialog.status.text()
    assert store.all() == [] and changes == [] and dialog.start_button.isEnabled()


def test_without_a_running_pipeline_it_lists_but_cannot_record(
        qtbot: QtBot, tmp_path: Path) -> None:
    store = VoicePrintStore(tmp_path)
    store.save(VoicePrint("Alice", tuple([1.0] + [0.0] * 255), 1.7e9, 21.0))
    dialog = dialog_for(qtbot, store, None, [])
    assert listed(dialog)[0].startswith("Alice — enrolled") and dialog.delete_button.isEnabled()
    assert not dialog.start_button.isEnabled() and "wait until" in dialog.status.text()


@pytest.mark.parametrize(("language", "expected"), [("ja", "駅の前"), ("zh", "车站前面"),
                                                     ("en", "birch canoe"), ("fr", "birch canoe")])
def test_the_reading_is_in_the_personas_language(
        qtbot: QtBot, tmp_path: Path, language: str, expected: str) -> None:
    dialog = VoicesDialog(VoicePrintStore(tmp_path), FakeSpeakerEncoder(), None,
                          lambda prints: None, "Yui", language=language)
    qtbot.addWidget(dialog)
    assert expected in dialog.sentences.text()


def test_every_control_has_a_name_a_screen_reader_can_say(
        qtbot: QtBot, tmp_path: Path) -> None:
    dialog = dialog_for(qtbot, VoicePrintStore(tmp_path), None, [])
    assert [w for w in interactive_widgets(dialog) if not w.accessibleName().strip()] == []


@pytest.fixture
def listening(window: MainWindow) -> Iterator[VoicePipeline]:
    """A fake-engine pipeline with a voice print encoder, wired as Session wires it."""
    engines = replace(fake_engines(), speaker=FakeSpeakerEncoder())
    pipe = VoicePipeline(engines, window.persona.full_system_prompt())
    pipe.add_observer(window.bridge.post)
    pipe.start()
    window.attach_pipeline(pipe)
    yield pipe
    window.detach_pipeline()
    pipe.stop()


def test_the_window_opens_it_and_a_reading_is_no_request(
        qtbot: QtBot, window: MainWindow, listening: VoicePipeline) -> None:
    pipeline = listening
    session = Session(window.bridge.post, fake=True, parent=window)
    session.running = Running(pipeline, None, window.persona.id)
    launcher = DialogLauncher(window, session, restart=lambda _settings: None)
    window.menus.voices_action.trigger()
    dialog = launcher.open_voices()
    assert dialog.isVisible() and dialog.start_button.isEnabled()
    dialog.name_edit.setText("Alice")
    turns: list[TurnStarted] = []
    pipeline.add_observer(lambda e: turns.append(e) if isinstance(e, TurnStarted) else None)
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert isinstance(dialog.source, MicrophoneSource)
    mic = Microphone(pipeline, silence(0.3), tone(2.0, hz=180.0), silence(1.0))
    qtbot.waitUntil(lambda: mic.done, timeout=10_000)
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=3000)
    assert turns == []  # the reading went to the tap, not to a turn
    dialog.reject()  # closing stops the reading: the companion listens again
    assert dialog.source is None
    mic = Microphone(pipeline, tone(1.0), silence(1.5))
    qtbot.waitUntil(lambda: bool(turns), timeout=10_000)


def test_opened_while_the_engines_load_it_can_record_once_they_are_up(
        qtbot: QtBot, window: MainWindow, listening: VoicePipeline) -> None:
    session = Session(window.bridge.post, fake=True, parent=window)
    launcher = DialogLauncher(window, session, restart=lambda _settings: None)
    dialog = launcher.open_voices()  # no pipeline yet
    assert not dialog.start_button.isEnabled() and "wait until" in dialog.status.text()
    session.running = Running(listening, None, window.persona.id)
    session.ready.emit(listening)
    assert dialog.start_button.isEnabled() and "wait until" not in dialog.status.text()
    dialog.name_edit.setText("Alice")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert isinstance(dialog.source, MicrophoneSource)
    dialog.reject()


def test_learn_my_voice_enrols_the_user_from_what_they_say(
        qtbot: QtBot, window: MainWindow) -> None:
    """Ticked in the dialog: six requests in one voice (a 180 Hz voice for the fake encoder)
    make "You (learnt)", saved, listed, announced, and used: a 300 Hz voice is then another
    voice. Learning turns itself off, and with a voice enrolled it cannot be ticked."""
    engines = replace(fake_engines("Yes."), speaker=FakeSpeakerEncoder())
    pipeline = VoicePipeline(engines, window.persona.full_system_prompt())
    pipeline.add_observer(window.bridge.post)
    pipeline.start()
    window.attach_pipeline(pipeline)
    session = Session(window.bridge.post, fake=True, parent=window)
    session.running = Running(pipeline, None, window.persona.id)
    launcher = DialogLauncher(window, session, restart=lambda _settings: None)
    dialog = launcher.open_voices()
    speaker = Speaker(pipeline)
    try:
        assert dialog.learn.isEnabled() and not dialog.learn.isChecked()
        assert window.persona.name in dialog.learn.text()
        dialog.learn.click()
        assert window.settings.learn_voice
        requests = [part for _ in range(6) for part in (tone(1.7, hz=180.0), silence(2.0))]
        mic = Microphone(pipeline, silence(0.3), *requests)
        qtbot.waitUntil(lambda: dialog.list.count() == 1, timeout=40_000)
        assert mic.position > 5 * int(3.7 * 16_000)  # after the sixth request, not before
        assert listed(dialog)[0].startswith("You (learnt) — enrolled")
        assert [voice.name for voice in VoicePrintStore().all()] == ["You (learnt)"]
        assert not window.settings.learn_voice
        assert not dialog.learn.isChecked() and not dialog.learn.isEnabled()
        assert any("knows your voice now" in notice for notice in window.notices.messages)
        qtbot.waitUntil(lambda: pipeline.controller.voices.gate.active, timeout=3000)
        mic = Microphone(pipeline, tone(1.7, hz=300.0), silence(2.0))
        qtbot.waitUntil(lambda: pipeline.recorder.other_voice == 1, timeout=10_000)
    finally:
        speaker.stop()
        window.detach_pipeline()
        pipeline.stop()


@pytest.mark.slow
def test_a_real_reading_makes_a_print_that_knows_its_voice(
        qtbot: QtBot, tmp_path: Path) -> None:
    """Piper's joe reads the dialog's sentences (twice: about 17 s of speech); the print the
    dialog stores knows joe's requests and not eSpeak's."""
    from app.adapters.voice_encoder import VoiceEncoder
    from app.core.voice_gate import VoiceGate
    from app.ui.voices_dialog import SENTENCES
    from tests.support.voices import voice_a, voice_b

    encoder = VoiceEncoder()
    reading = np.concatenate([voice_a(s) for s in SENTENCES * 2])
    store, changes = VoicePrintStore(tmp_path), []
    source = FileSource(reading, speed=8.0)
    dialog = VoicesDialog(store, encoder, lambda: source,
                          lambda prints: changes.append([p.name for p in prints]), "Kai")
    qtbot.addWidget(dialog)
    dialog.name_edit.setText("Joe")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: changes == [["Joe"]], timeout=20_000)
    gate = VoiceGate(tuple(store.all()))
    assert gate.known(encoder.embed(voice_a("What time is it right now?")))
    assert not gate.known(encoder.embed(voice_b("What time is it right now?")))
