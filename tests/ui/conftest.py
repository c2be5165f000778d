"""UI tests run offscreen (or on a real X server for the xcb screenshot run) with fake engines."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import numpy as np
import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

if os.environ.get("HANASU_SCREENSHOT_XCB") == "1" and os.environ.get("DISPLAY"):
    os.environ["QT_QPA_PLATFORM"] = "xcb"
else:
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    # No OpenGL in the suite's own process, whatever DISPLAY says: Mesa's GLX context there
    # once ended the run with a segfault files later. Tests that draw OpenGL run in a child.
    os.environ["QT_QPA_OFFSCREEN_NO_GLX"] = "1"
os.environ["HANASU_NO_AUDIO"] = "1"

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.pipeline import Engines, VoicePipeline
from app.personas.loader import PersonaLibrary, load_personas
from app.storage.settings import Settings
from app.ui.theme import apply_theme
from app.ui.window import MainWindow

RATE = 16_000
BLOCK = 512
REPLY = ("Nice to meet you, I am Hana. I love long walks by the sea and little cafes. "
         "What would you like to talk about today?")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here needs Qt (offscreen or a display): mark them ``gui``."""
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.gui)


@pytest.fixture(autouse=True)
def _qt_garbage_freed_on_the_gui_thread() -> Iterator[None]:
    """Qt objects caught in reference cycles are freed by the cyclic collector on whichever
    thread happens to allocate when it runs (a keeper's writer, a pipeline stage), and a
    widget deleted off the GUI thread crashes Qt later, in its event processing (CI died
    so, in test_timers_dialog, with eleven keeper writers alive). No automatic collection
    during a UI test; after it, one here, on the GUI thread."""
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        gc.enable()


@pytest.fixture(autouse=True)
def _user_dirs(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HANASU_CONFIG_DIR", f"{tmp_path}/config")
    monkeypatch.setenv("HANASU_DATA_DIR", f"{tmp_path}/data")
    monkeypatch.setenv("HANASU_LOG_DIR", f"{tmp_path}/log")


@pytest.fixture
def library() -> PersonaLibrary:
    return load_personas()


@pytest.fixture
def saved() -> list[Settings]:
    return []


@pytest.fixture
def window(qtbot: QtBot, qapp: object, library: PersonaLibrary,
           saved: list[Settings]) -> Iterator[MainWindow]:
    apply_theme(qapp)  # type: ignore[arg-type]
    win = MainWindow(library, Settings(), save_settings=saved.append)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.shutdown()


def fake_engines(reply: str = REPLY) -> Engines:
    return Engines(FakeVoiceActivity(), FakeRecognizer(), FakeLanguageModel(reply=reply),
                   FakeSynthesizer())


@pytest.fixture
def pipeline(window: MainWindow) -> Iterator[VoicePipeline]:
    """A fake-engine pipeline wired to the window the way Session wires it."""
    pipe = VoicePipeline(fake_engines(), window.persona.full_system_prompt())
    pipe.add_observer(window.bridge.post)
    pipe.start()
    window.attach_pipeline(pipe)
    yield pipe
    window.detach_pipeline()
    pipe.stop()


class Speaker:
    """Pulls audio from a QTimer like the output device would (``speed`` x real time)."""

    def __init__(self, pipeline: VoicePipeline, speed: float = 1.0) -> None:
        self.frames = int(pipeline.engines.tts.sample_rate * 0.02 * speed)
        self.pipeline = pipeline
        self.timer = QTimer()
        self.timer.setInterval(20)
        self.timer.timeout.connect(lambda: self.pipeline.pull_audio(self.frames))
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()


class Microphone:
    """Pushes audio in 512-sample blocks at real-time pace from a QTimer, like the device."""

    def __init__(self, pipeline: VoicePipeline, *parts: np.ndarray) -> None:
        self.audio = np.concatenate(parts)
        self.position = 0
        self.pipeline = pipeline
        self.timer = QTimer()
        self.timer.setInterval(int(BLOCK / RATE * 1000))
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    @property
    def done(self) -> bool:
        return self.position >= self.audio.size

    def _tick(self) -> None:
        if self.done:
            self.timer.stop()
            return
        self.pipeline.push_audio(self.audio[self.position:self.position + BLOCK])
        self.position += BLOCK


def tone(seconds: float, amplitude: float = 0.3, hz: float = 200.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE), dtype=np.float32) / RATE
    return (amplitude * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), dtype=np.float32)


def feed(pipeline: VoicePipeline, *parts: np.ndarray) -> None:
    """Push audio as the microphone callback would: 512-sample blocks."""
    audio = np.concatenate(parts)
    for start in range(0, audio.size, BLOCK):
        pipeline.push_audio(audio[start:start + BLOCK])


def utterance() -> tuple[np.ndarray, ...]:
    return silence(0.5), tone(1.5), silence(1.0)
