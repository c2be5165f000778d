"""The persona editor and the sidebar's persona actions, driven through the real window:
create (with a validation error shown first), save, the new persona in the sidebar without
a restart, duplicate a built-in, edit, delete, import a dropped card, a broken file listed
as a notice, the greeting spoken on selection, and screenshots of the editor."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from pytestqt.qtbot import QtBot

from app.core.events import SpeechAudio
from app.core.pipeline import VoicePipeline
from app.personas.loader import load_persona_library, user_personas_dir
from app.personas.model import Persona
from app.ui.greeting_preview import GreetingPreview
from app.ui.persona_editor import PersonaEditor
from app.ui.window import MainWindow
from tests.ui.conftest import Speaker
from tests.ui.test_inputs_show_values import assert_every_input_drawn

SHOTS = Path(__file__).parent / "screenshots"


def _ids(window: MainWindow) -> list[str]:
    return [p.id for p in window.sidebar.personas]


def _fill(editor: PersonaEditor, name: str = "Mika", prompt: str = "You are Mika, a baker.",
          greeting: str = "Hi, I'm Mika!") -> None:
    editor.name.setText(name)
    editor.description.setText("A cheerful baker")
    editor.prompt.setPlainText(prompt)
    editor.greeting.setPlainText(greeting)


def test_create_validate_save_and_it_appears(qtbot: QtBot, window: MainWindow) -> None:
    actions = window.persona_actions
    editor = actions.new()
    qtbot.waitExposed(editor)
    _fill(editor, prompt="")
    editor.save()
    assert editor.isVisible()  # not saved: the error is shown in the dialog
    assert editor.error.isVisible()
    assert editor.error.text() == "System prompt must not be empty"
    assert "mika" not in _ids(window)
    editor.description.setText("x" * 121)
    editor.prompt.setPlainText("You are Mika, a baker.")
    editor.save()
    assert editor.error.text() == "Description is too long (at most 120 characters)"
    editor.description.setText("A cheerful baker")
    editor.voice.setCurrentText("bf_emma")
    editor.temperature.setValue(0.4)
    editor.reply_sentences.setValue(2)
    editor.colours["accent"].set_colour("#123456")
    editor.save()
    assert not editor.isVisible()
    path = user_personas_dir() / "mika.toml"
    assert path.is_file()
    saved = load_persona_library().get("mika")
    assert saved.voice.kokoro == "bf_emma" and saved.avatar.accent == "#123456"
    assert saved.llm.temperature == 0.4 and saved.llm.reply_sentences == 2
    assert "mika" in _ids(window)  # no restart needed
    assert window.persona.id == "mika"  # and it is selected
    assert not list(path.parent.glob(".persona-*"))  # no temporary file left behind


def test_builtin_is_read_only_but_duplicates(qtbot: QtBot, window: MainWindow) -> None:
    actions = window.persona_actions
    window.sidebar.select("captain")
    assert not window.sidebar.edit_button.isEnabled()
    assert not window.sidebar.delete_button.isEnabled()
    assert actions.edit(window.library.get("captain")) is None
    assert actions.delete(window.library.get("captain"), confirm=False) is False
    editor = actions.duplicate(window.library.get("captain"))
    qtbot.waitExposed(editor)
    assert editor.name.text() == "Captain Mori (copy)"
    assert editor.prompt.toPlainText().startswith("You are Captain Mori")
    editor.save()
    copy = window.library.get("captain-mori-copy")  # the id follows the name
    assert copy.voice == window.library.get("captain").voice
    assert window.persona.id == "captain-mori-copy"
    assert window.sidebar.edit_button.isEnabled()


def test_edit_current_persona_then_delete_it(qtbot: QtBot, window: MainWindow) -> None:
    actions = window.persona_actions
    editor = actions.new()
    _fill(editor)
    editor.save()
    mika = window.library.get("mika")
    editor = actions.edit(mika)
    assert editor is not None
    qtbot.waitExposed(editor)
    editor.prompt.setPlainText("You are Mika, a baker who loves bread.")
    editor.save()
    assert window.persona.system_prompt == "You are Mika, a baker who loves bread."
    assert window.library.get("mika").system_prompt.endswith("loves bread.")
    assert actions.delete(window.library.get("mika"), confirm=False)
    assert "mika" not in _ids(window)
    assert window.persona.id == window.library.default.id
    assert not (user_personas_dir() / "mika.toml").exists()


def test_speaking_first_is_turned_on_in_the_editor_and_reaches_the_session(
        qtbot: QtBot, window: MainWindow) -> None:
    changed: list[Persona] = []
    window.persona_changed.connect(changed.append)
    editor = window.persona_actions.new()
    _fill(editor)
    assert editor.check_in_rows.quiet.text() == "Never"  # off unless asked for
    assert not editor.check_in_rows.away.isEnabled()
    editor.check_in_rows.quiet.setValue(20)
    qtbot.mouseClick(editor.check_in_rows.welcome, Qt.MouseButton.LeftButton)
    assert editor.check_in_rows.away.isEnabled()
    editor.check_in_rows.away.setValue(30)
    editor.check_in_rows.every.setValue(90)
    editor.save()
    saved = (user_personas_dir() / "mika.toml").read_text(encoding="utf-8")
    assert "[checkin]" in saved and "welcome_back = true" in saved
    checkin = window.library.get("mika").checkin
    assert (checkin.after_minutes, checkin.welcome_back, checkin.away_minutes,
            checkin.every_minutes) == (20.0, True, 30.0, 90.0)
    assert window.persona.id == "mika" and changed[-1].checkin == checkin


def test_broken_file_is_listed_and_hides_nothing(qtbot: QtBot, window: MainWindow) -> None:
    folder = user_personas_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "broken.toml").write_text('id = "broken"\nname = \n', encoding="utf-8")
    editor = window.persona_actions.new()
    _fill(editor)
    editor.save()
    assert "mika" in _ids(window) and "hana" in _ids(window)
    assert any("broken.toml" in m for m in window.notices.messages)


def _card_png() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    card = {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": "Lumi", "description": "A lighthouse keeper.",
                     "first_mes": "The lamp is lit, {{user}}.", "personality": "calm"}}
    rows = b"".join(b"\0" + b"\xff\x80\x20" * 4 for _ in range(4))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"tEXt", b"chara\0" + base64.b64encode(json.dumps(card).encode()))
            + chunk(b"IEND", b""))


def test_dropping_a_card_imports_it(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    card = tmp_path / "lumi.png"
    card.write_bytes(_card_png())
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(card))])
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    window.sidebar.dropEvent(drop)
    assert "lumi" in _ids(window)
    lumi = window.library.get("lumi")
    assert lumi.greeting == "The lamp is lit, friend."
    assert window.library.image_path(lumi) == user_personas_dir() / "lumi.png"
    exported = tmp_path / "out.png"
    assert window.persona_actions.export_card(lumi, exported)
    assert b"ccv3" in exported.read_bytes() and b"chara" in exported.read_bytes()


def test_bad_card_gives_one_line_and_imports_nothing(window: MainWindow, tmp_path: Path) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    before = _ids(window)
    assert window.persona_actions.import_card_file(bad) is None
    assert _ids(window) == before
    assert "bad.png" in window.persona_actions.last_error
    assert any("Character card not imported" in m for m in window.notices.messages)


def test_greeting_is_spoken_on_selection_unless_turned_off(
        qtbot: QtBot, window: MainWindow, pipeline: VoicePipeline) -> None:
    spoken: list[str] = []
    pipeline.add_observer(lambda e: spoken.append(e.text) if isinstance(e, SpeechAudio) else None)
    speaker = Speaker(pipeline, speed=4.0)
    try:
        window.sidebar.select("kai")
        qtbot.waitUntil(lambda: bool(spoken), timeout=5000)
        assert spoken[0] == "Hey, Kai here."
        window.settings = window.settings.replace(speak_greeting=False)
        qtbot.waitUntil(pipeline.is_idle, timeout=10000)
        spoken.clear()
        window.sidebar.select("hana")
        qtbot.wait(400)
        assert spoken == []
    finally:
        speaker.stop()


def test_persona_llm_settings_reach_the_pipeline(
        qtbot: QtBot, window: MainWindow, pipeline: VoicePipeline) -> None:
    window.sidebar.select("tess")  # applied on the LLM thread, before the next reply
    qtbot.waitUntil(lambda: pipeline.responder.max_sentences == 3, timeout=5000)
    qtbot.waitUntil(lambda: pipeline.engines.llm.temperature == 0.3,  # type: ignore[attr-defined]
                    timeout=5000)
    window.sidebar.select("hana")
    qtbot.waitUntil(lambda: pipeline.responder.max_sentences
                    == pipeline.config.max_reply_sentences, timeout=5000)
    qtbot.waitUntil(lambda: pipeline.engines.llm.temperature is None,  # type: ignore[attr-defined]
                    timeout=5000)


def test_preview_says_the_greeting_or_why_not(qtbot: QtBot, window: MainWindow) -> None:
    played: list[tuple[int, int]] = []

    def synth(text: str, voice: str, speed: float) -> tuple[np.ndarray, int]:
        return np.zeros(2400, dtype=np.float32), 24_000

    preview = GreetingPreview(synth, lambda s, r: played.append((s.size, r)))
    statuses: list[str] = []
    preview.status.connect(statuses.append)
    preview.start("Hello!", "af_heart", 1.0)
    qtbot.waitUntil(lambda: statuses[-1].startswith("Said it"), timeout=3000)
    assert played == [(2400, 24_000)]

    def no_device(samples: np.ndarray, rate: int) -> None:
        raise RuntimeError("Error querying device -1")

    silent = GreetingPreview(synth, no_device)
    silent.status.connect(statuses.append)
    silent.start("Hello!", "af_heart", 1.0)
    qtbot.waitUntil(lambda: statuses[-1].startswith("No audio device"), timeout=3000)
    editor = window.persona_actions.new()  # no engine loaded: the dialog says so
    editor.preview_button.click()
    assert "loading" in editor.preview_status.text()


@pytest.mark.parametrize("which", ["new", "card"])
def test_editor_screenshot_and_inputs_drawn(qtbot: QtBot, window: MainWindow, tmp_path: Path,
                                            which: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    actions = window.persona_actions
    if which == "card":
        card = tmp_path / "lumi.png"
        card.write_bytes(_card_png())
        persona = actions.import_card_file(card)
        assert isinstance(persona, Persona)
        editor = actions.edit(persona)
        assert editor is not None
    else:
        editor = actions.duplicate(window.library.get("riko"))
    qtbot.waitExposed(editor)
    editor.resize(720, 1040)  # tall enough to show every field in the screenshot
    if which == "new":
        editor.name.setText("")
        editor.save()  # the validation error, as the user sees it
    qtbot.wait(50)
    assert_every_input_drawn(editor)
    editor.grab().save(str(SHOTS / f"persona-editor-{which}-offscreen.png"))
    window.grab().save(str(SHOTS / f"window-personas-{which}-offscreen.png"))


def test_voice_list_and_preview_without_kokoro() -> None:
    from app.adapters.fakes import FakeSynthesizer
    from app.ui.greeting_preview import KOKORO_VOICES, voice_engine

    voices, synthesize, note = voice_engine(FakeSynthesizer())
    assert tuple(voices) == KOKORO_VOICES and "one speaker" in note
    assert synthesize is not None
    samples, rate = synthesize("Hi there.", "af_heart", 1.0)
    assert rate == 16_000 and samples.size > 0
    assert voice_engine(None)[1] is None  # engines still loading: no preview yet


def test_editor_says_when_settings_override_the_voice(window: MainWindow) -> None:
    window.settings = window.settings.replace(tts_voice="am_adam")
    editor = window.persona_actions.new()
    assert "am_adam for every persona" in editor.preview_status.text()


def test_a_duplicated_tutor_keeps_its_languages_and_a_new_language_leads(
    qtbot: QtBot, window: MainWindow
) -> None:
    editor = window.persona_actions.duplicate(window.library.get("riko"))
    qtbot.waitExposed(editor)
    assert editor.collect().spoken_languages() == ("en", "ja", "zh")
    editor.language.setCurrentIndex(editor.language.findData("ja"))
    assert editor.collect().spoken_languages() == ("ja", "en", "zh")  # not refused
    editor.switch_languages.setChecked(False)
    assert editor.collect().spoken_languages() == ("ja",)
    plain = window.persona_actions.duplicate(window.library.get("hana"))
    qtbot.waitExposed(plain)
    assert not plain.switch_languages.isChecked()
    plain.language.setCurrentIndex(plain.language.findData("zh"))
    assert plain.collect().spoken_languages() == ("zh",)
    plain.switch_languages.setChecked(True)
    assert plain.collect().spoken_languages() == ("zh", "en", "ja")
    editor.done(0)  # reject() would ask about the changes
    plain.done(0)
