"""Honest readiness: no "Ready" while a switched-to persona still warms up, and the arrow
keys walk the persona list without starting a switch (and its loading) on every step."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.events import AssistantState
from app.core.pipeline import Engines, VoicePipeline
from app.core.ports import ChatMessage, PromptStats
from app.personas.loader import PersonaLibrary
from app.personas.model import Persona
from app.ui.sidebar import SETTLE_MS
from app.ui.window import STATUS_TEXT, MainWindow

READY = STATUS_TEXT[AssistantState.IDLE]


class GatedWarm(FakeLanguageModel):
    """A model whose prefix warm-up waits for ``gate`` once ``hold`` is set (a long
    prompt on a real model takes seconds)."""

    def __init__(self) -> None:
        super().__init__(reply="Hello.")
        self.hold = False
        self.gate = threading.Event()

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        if self.hold:
            self.gate.wait(20)
        return super().warm(messages)


@pytest.fixture
def gated(window: MainWindow) -> Iterator[GatedWarm]:
    window.settings = window.settings.replace(speak_greeting=False)
    llm = GatedWarm()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(), llm, FakeSynthesizer())
    pipe = VoicePipeline(engines, window.persona.full_system_prompt())
    pipe.add_observer(window.bridge.post)
    pipe.start()
    window.attach_pipeline(pipe)
    yield llm
    llm.gate.set()
    window.detach_pipeline()
    pipe.stop()


def test_not_ready_while_the_new_persona_warms(qtbot: QtBot, window: MainWindow,
                                               gated: GatedWarm,
                                               library: PersonaLibrary) -> None:
    qtbot.waitUntil(lambda: window.status.text() == READY, timeout=5000)
    gated.hold = True
    kai = library.get("kai")
    window.sidebar.select(kai.id)
    assert window.persona.id == kai.id
    assert window.status.text() == f"Getting {kai.name} ready…"
    qtbot.wait(600)  # several readiness polls: the warm-up still runs
    assert window.status.text() == f"Getting {kai.name} ready…"
    gated.gate.set()
    qtbot.waitUntil(lambda: window.status.text() == READY, timeout=5000)


def test_a_superseded_persona_is_never_the_one_waited_for(qtbot: QtBot, window: MainWindow,
                                                          gated: GatedWarm,
                                                          library: PersonaLibrary) -> None:
    qtbot.waitUntil(lambda: window.status.text() == READY, timeout=5000)
    gated.hold = True
    window.sidebar.select("kai")
    tess = library.get("tess")
    window.sidebar.select(tess.id)
    assert window.status.text() == f"Getting {tess.name} ready…"
    gated.gate.set()
    qtbot.waitUntil(lambda: window.status.text() == READY, timeout=5000)


def test_arrow_keys_switch_only_when_the_selection_rests(qtbot: QtBot,
                                                         window: MainWindow) -> None:
    switched: list[Persona] = []
    window.persona_changed.connect(switched.append)
    sidebar = window.sidebar
    sidebar.setFocus()
    start = sidebar.currentRow()
    assert start + 3 < sidebar.count()
    for _ in range(3):
        QTest.keyClick(sidebar, Qt.Key.Key_Down)
    assert sidebar.currentRow() == start + 3
    assert switched == []  # no switch (and no loading) per step
    qtbot.waitUntil(lambda: len(switched) == 1, timeout=SETTLE_MS * 5)
    assert switched[0].id == sidebar.personas[start + 3].id
    assert window.persona.id == switched[0].id
    QTest.keyClick(sidebar, Qt.Key.Key_Up)
    QTest.keyClick(sidebar, Qt.Key.Key_Return)  # Enter switches at once
    assert [p.id for p in switched] == [sidebar.personas[start + 3].id,
                                        sidebar.personas[start + 2].id]
    qtbot.wait(SETTLE_MS + 200)  # the pending settle was cancelled by Enter
    assert len(switched) == 2


def test_a_click_switches_at_once(qtbot: QtBot, window: MainWindow) -> None:
    sidebar = window.sidebar
    row = (sidebar.currentRow() + 1) % sidebar.count()
    rect = sidebar.visualItemRect(sidebar.item(row))
    QTest.mouseClick(sidebar.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.persona.id == sidebar.personas[row].id
