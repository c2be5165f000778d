"""Problems with the user's files reach the window's notice area, with their reason,
instead of only the log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from app.core.pipeline import VoicePipeline
from app.personas.loader import PersonaLibrary
from app.storage.settings import Settings, SettingsError
from app.ui.main import create_window
from app.ui.theme import apply_theme
from app.ui.window import MainWindow
from tests.ui.conftest import fake_engines


def _shots() -> Path:
    return Path(__file__).parent / "screenshots"


@pytest.fixture
def hostile_home(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A malformed persona in the user folder and a corrupt settings file (the conftest
    points HANASU_DATA_DIR / HANASU_CONFIG_DIR into tmp_path)."""
    personas = Path(os.environ["HANASU_DATA_DIR"]) / "personas"
    personas.mkdir(parents=True)
    bad_persona = personas / "deep.toml"
    bad_persona.write_text("a = " + "[" * 5_000 + "]" * 5_000)
    config = Path(os.environ["HANASU_CONFIG_DIR"])
    config.mkdir(parents=True)
    settings_file = config / "settings.json"
    settings_file.write_text("[" * 5_000 + "]" * 5_000)
    yield bad_persona, settings_file


@pytest.fixture
def started(qtbot: QtBot, qapp: object, hostile_home: tuple[Path, Path]) -> Iterator[MainWindow]:
    apply_theme(qapp)  # type: ignore[arg-type]
    window = create_window()  # exactly what run_app does before show()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    yield window
    window.shutdown()


def test_bad_persona_and_corrupt_settings_show_in_the_notice_area(
    qtbot: QtBot, started: MainWindow, hostile_home: tuple[Path, Path]
) -> None:
    bad_persona, settings_file = hostile_home
    messages = started.notices.messages
    assert len(messages) == 2, messages
    persona_notice = next(m for m in messages if str(bad_persona) in m)
    assert "nested more than" in persona_notice
    settings_notice = next(m for m in messages if "settings" in m)
    assert "nested more than" in settings_notice
    assert str(settings_file) + ".bad" in settings_notice
    assert started.notices.button.isVisible()
    assert started.notices.button.text() == "⚠ 2"
    assert not started.notices.panel.isVisible()  # quiet: nothing opens on its own
    started.notices.button.click()
    assert started.notices.panel.isVisible()
    started.resize(1180, 740)
    qtbot.wait(50)
    shots = _shots()
    shots.mkdir(exist_ok=True)
    path = shots / f"window-notices-{QGuiApplication.platformName()}.png"
    assert started.grab().toImage().save(str(path))
    started.notices.dismiss.click()
    assert started.notices.messages == []
    assert not started.notices.button.isVisible()
    assert not started.notices.panel.isVisible()


def test_failed_save_and_engine_notices_are_shown(
    qtbot: QtBot, qapp: object, library: PersonaLibrary
) -> None:
    def full_disk(settings: Settings) -> None:
        raise SettingsError("Could not save settings to /x/settings.json: No space left on device")

    window = MainWindow(library, Settings(), save_settings=full_disk)
    qtbot.addWidget(window)
    window.set_muted(True)  # a change that is saved
    qtbot.waitUntil(lambda: bool(window.notices.messages), timeout=3000)
    assert "No space left on device" in window.notices.messages[0]
    engines = fake_engines()
    object.__setattr__(engines, "notices", ("Kokoro failed to load; speaking with eSpeak",))
    pipeline = VoicePipeline(engines, window.persona.full_system_prompt())
    window.attach_pipeline(pipeline)
    window.attach_pipeline(pipeline)  # a restart repeats it: shown once
    assert window.notices.messages[1:] == ["Kokoro failed to load; speaking with eSpeak"]
    window.shutdown()


def test_a_replaced_builtin_persona_is_noticed(qtbot: QtBot, qapp: object) -> None:
    personas = Path(os.environ["HANASU_DATA_DIR"]) / "personas"
    personas.mkdir(parents=True)
    (personas / "hana.toml").write_text('id = "hana"\nname = "My Hana"\nsystem_prompt = "Hi."\n')
    window = create_window()
    qtbot.addWidget(window)
    assert window.notices.messages == [
        f"Your persona 'hana' ({personas / 'hana.toml'}) replaces the built-in persona 'hana'."]
    assert window.persona.name == "My Hana"
    window.shutdown()
