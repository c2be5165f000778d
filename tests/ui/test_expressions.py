"""The face shows each sentence's emotion as it plays, blending in and back to the
persona's resting expression; it looks attentive and nods at the user's pauses while
listening, thoughtful while the answer is prepared, and a calm face still paints rarely.

Each expression is rendered to tests/ui/screenshots/expression-*.png for review; with
``HANASU_SCREENS=docs/screens`` also there, for the README's screens."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.core.emotion import Emotion
from app.core.events import AssistantState, SpeechPaused, StateChanged
from app.core.telemetry import ExpressionCue
from app.personas.expression import ExpressionSettings
from app.personas.loader import PersonaLibrary
from app.personas.model import Persona
from app.personas.writer import persona_to_toml
from app.ui.avatar import CALM_FRAME_MS, FRAME_MS, AvatarWidget
from app.ui.face_expression import BLEND_S, EXPRESSIONS, NEUTRAL, NOD_GAP_S, NOD_S
from app.ui.window import MainWindow

SHOTS = Path(__file__).parent / "screenshots"
S = AssistantState


def _avatar(qtbot: QtBot, size: int = 240) -> AvatarWidget:
    avatar = AvatarWidget(seed=3)
    qtbot.addWidget(avatar)
    avatar.resize(size, size)
    avatar.show()
    qtbot.waitExposed(avatar)
    avatar.freeze(10.0)  # driven by ``advance`` from here
    return avatar


def _differing(a: QImage, b: QImage) -> int:
    step = 2
    return sum(a.pixel(x, y) != b.pixel(x, y)
               for x in range(0, a.width(), step) for y in range(0, a.height(), step))


def _save(image: QImage, name: str) -> None:
    folders = [SHOTS] + ([Path(os.environ["HANASU_SCREENS"])]
                         if os.environ.get("HANASU_SCREENS") else [])
    for folder in folders:
        folder.mkdir(exist_ok=True)
        assert image.save(str(folder / f"expression-{name}.png"))


def test_each_emotion_draws_its_own_face(qtbot: QtBot, library: PersonaLibrary) -> None:
    avatar = _avatar(qtbot, 200)
    avatar.set_avatar_style(library.default.avatar)
    avatar.set_state(S.SPEAKING)
    images: dict[Emotion, QImage] = {}
    for emotion in Emotion:
        avatar.show_expression(emotion)
        avatar.freeze(1.3, mouth=0.0)
        assert avatar.expression == EXPRESSIONS[emotion]
        images[emotion] = avatar.grab().toImage()
        _save(images[emotion], emotion.value)
    avatar.set_state(S.LISTENING)
    avatar.freeze(1.3)
    _save(avatar.grab().toImage(), "listening")
    for a in Emotion:
        for b in Emotion:
            if a.value < b.value:
                assert _differing(images[a], images[b]) > 40, (a, b)


def test_the_face_blends_into_a_sentence_s_emotion_and_back_to_rest(qtbot: QtBot) -> None:
    avatar = _avatar(qtbot)
    avatar.set_state(S.SPEAKING)
    avatar.cue(Emotion.SURPRISED)
    target = EXPRESSIONS[Emotion.SURPRISED]
    avatar.advance(10.0 + BLEND_S / 2)
    halfway = avatar.expression
    assert NEUTRAL.brow_lift < halfway.brow_lift < target.brow_lift
    avatar.advance(10.0 + BLEND_S + 0.01)
    assert avatar.expression == target
    avatar.cue(None)  # a sentence with no tag: the resting face
    avatar.advance(10.5 + BLEND_S)
    assert avatar.expression == NEUTRAL
    avatar.set_resting(Emotion.HAPPY)  # a cheerful persona rests smiling
    assert avatar.expression == EXPRESSIONS[Emotion.HAPPY]
    avatar.cue(Emotion.SAD)
    avatar.advance(11.0)
    avatar.end_of_reply()
    avatar.advance(11.0 + BLEND_S)
    assert avatar.expression == EXPRESSIONS[Emotion.HAPPY]


def test_thinking_and_listening_have_their_own_looks(qtbot: QtBot) -> None:
    avatar = _avatar(qtbot)
    avatar.set_state(S.THINKING)
    avatar.advance(10.0 + BLEND_S)
    assert avatar.expression == EXPRESSIONS[Emotion.THINKING]
    avatar.set_state(S.LISTENING)
    avatar.advance(11.0)
    attentive = avatar.expression
    assert attentive.drift == 0.0 and attentive.eye_open > 1.0  # eyes on the user, wide


def test_a_nod_at_the_user_s_pauses_only_while_listening(qtbot: QtBot) -> None:
    avatar = _avatar(qtbot)
    avatar.set_state(S.IDLE)
    avatar.nod()
    avatar.advance(10.1)
    assert avatar.pose().nod == 0.0  # nobody is talking to it
    avatar.set_state(S.LISTENING)
    avatar.advance(11.0)
    avatar.nod()
    depths = []
    for step in range(1, 12):
        avatar.advance(11.0 + step * NOD_S / 10)
        if step == 3:
            avatar.nod()  # a second pause in the same breath: no second nod
        depths.append(avatar.pose().nod)
    assert max(depths) > 0.9 and depths[-1] == 0.0
    assert all(d == 0.0 for d in depths[10:])
    avatar.advance(11.05 + NOD_GAP_S)
    avatar.nod()  # the next pause, a while later
    avatar.advance(11.05 + NOD_GAP_S + NOD_S / 2)
    assert avatar.pose().nod > 0.9


def test_a_blend_keeps_the_calm_face_painting_only_while_it_lasts(qtbot: QtBot) -> None:
    avatar = _avatar(qtbot)
    avatar.set_state(S.IDLE)
    t = 10.0
    for _ in range(3):
        t += 0.2
        avatar.advance(t)
    assert avatar._timer.interval() == CALM_FRAME_MS or avatar.blink > 0.0
    avatar.set_resting(Emotion.SMUG)  # snaps: no blend
    avatar.set_state(S.IDLE)
    avatar.end_of_reply()
    assert avatar._timer.interval() in (CALM_FRAME_MS, FRAME_MS)
    avatar.set_state(S.THINKING)
    avatar.set_state(S.IDLE)  # back from thinking: a blend to rest
    avatar.advance(t + 0.01)
    assert avatar._timer.interval() == FRAME_MS
    paints = avatar.paints
    avatar.advance(t + 0.05)
    QApplication.processEvents()
    assert avatar.paints > paints  # a blending face is painted every frame
    avatar.advance(t + BLEND_S + 0.3)
    avatar.advance(t + BLEND_S + 0.31)
    if avatar.blink == 0.0:
        assert avatar._timer.interval() == CALM_FRAME_MS


@pytest.mark.parametrize("emotion", [Emotion.HAPPY, None])
def test_the_window_cues_the_face_from_the_pipeline(
        qtbot: QtBot, window: MainWindow, emotion: Emotion | None) -> None:
    avatar = window.avatar
    window.bridge.post(StateChanged(S.LISTENING, 1.0))
    window.bridge.post(SpeechPaused(1.0, 0.5, 1.0, audio=None))  # type: ignore[arg-type]
    window.bridge.post(StateChanged(S.SPEAKING, 2.0))
    window.bridge.post(ExpressionCue(1, 0, emotion, 2.0))
    window.bridge.drain()
    assert avatar.spoken is emotion
    avatar.freeze(5.0)
    expected = EXPRESSIONS[emotion or window.persona.expression.resting]
    assert avatar.expression == expected


def test_the_editor_sets_the_resting_face_and_the_tags(qtbot: QtBot, window: MainWindow) -> None:
    editor = window.persona_actions.new()
    qtbot.waitExposed(editor)
    editor.name.setText("Mika")
    editor.prompt.setPlainText("You are Mika, a baker.")
    assert editor.collect().expression == ExpressionSettings()  # neutral, tags asked for
    editor.face_rows.resting.setCurrentIndex(list(Emotion).index(Emotion.SMUG))
    editor.face_rows.feelings.setChecked(False)
    persona = editor.collect()
    assert persona.expression == ExpressionSettings(resting=Emotion.SMUG, tags=False)
    assert "[happy]" not in persona.full_system_prompt()  # no tags asked for
    assert "[happy]" in window.persona.full_system_prompt()
    assert persona_from_toml(persona_to_toml(persona)) == persona
    editor.done(0)  # reject() would ask about the changes


def persona_from_toml(text: str) -> Persona:
    return Persona.model_validate(tomllib.loads(text))


def test_the_desktop_pet_makes_the_same_faces(window: MainWindow) -> None:
    window.pet.enter()
    pet = window.pet.pet
    assert pet is not None
    window.avatar.set_resting(Emotion.SMUG)
    window.bridge.post(StateChanged(S.LISTENING, 1.0))
    window.bridge.post(SpeechPaused(1.0, 0.5, 1.0, audio=None))  # type: ignore[arg-type]
    window.bridge.drain()
    assert pet.avatar.resting is Emotion.SMUG and pet.avatar.nods == window.avatar.nods == 1
    window.bridge.post(StateChanged(S.SPEAKING, 2.0))
    window.bridge.post(ExpressionCue(1, 0, Emotion.SAD, 2.0))
    window.bridge.drain()
    assert pet.avatar.spoken is Emotion.SAD
    pet.avatar.freeze(5.0)
    assert pet.avatar.expression == EXPRESSIONS[Emotion.SAD]
    window.pet.leave()
