"""The avatar animates on its own timer: random blinks, a smoothed mouth, cheap paints."""

from __future__ import annotations

import itertools
import time

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter, QPixmap
from pytestqt.qtbot import QtBot

from app.core.events import AssistantState
from app.personas.loader import PersonaLibrary
from app.personas.model import AvatarStyle
from app.ui import avatar as avatar_module
from app.ui.avatar import FRAME_MS, AvatarWidget
from app.ui.face import paint_face, render_thumbnail
from app.ui.face_pose import FaceColours, FacePose


def test_frame_rate_is_at_least_30_fps() -> None:
    assert 1000 / FRAME_MS >= 30


def test_eyes_blink_at_random_intervals(qtbot: QtBot) -> None:
    avatar = AvatarWidget(seed=1)
    qtbot.addWidget(avatar)
    avatar.freeze(0.0)
    closed_at = []
    for step in range(int(20 / 0.03)):
        avatar.advance(step * 0.03)
        if avatar.blink > 0.9:
            closed_at.append(step * 0.03)
    blinks = [t for i, t in enumerate(closed_at) if i == 0 or t - closed_at[i - 1] > 0.2]
    assert 3 <= len(blinks) <= 12, blinks
    gaps = {round(b - a, 1) for a, b in itertools.pairwise(blinks)}
    assert len(gaps) > 1  # not a metronome


def test_mouth_follows_playback_level_smoothly(qtbot: QtBot) -> None:
    avatar = AvatarWidget(seed=1)
    qtbot.addWidget(avatar)
    avatar.freeze(0.0)
    avatar.set_state(AssistantState.SPEAKING)
    avatar.set_level(0.15)
    avatar.advance(0.03)
    first = avatar.mouth
    assert 0.2 < first < 0.9  # opens fast but not instantly
    for i in range(10):
        avatar.advance(0.06 + i * 0.03)
    assert avatar.mouth > 0.85
    avatar.set_level(0.0)
    avatar.advance(0.5)
    assert 0.3 < avatar.mouth < 0.85  # closes softly
    avatar.set_state(AssistantState.IDLE)
    for i in range(30):
        avatar.advance(1 + i * 0.03)
    assert avatar.mouth < 0.01


def test_paint_is_cheap(qtbot: QtBot) -> None:
    avatar = AvatarWidget(seed=1)
    qtbot.addWidget(avatar)
    avatar.resize(480, 480)
    avatar.freeze(1.0)
    started = time.perf_counter()
    for state in AssistantState:
        avatar.set_state(state, "Microphone disconnected")
        avatar.grab()
    per_frame_ms = (time.perf_counter() - started) * 1000 / len(AssistantState)
    assert per_frame_ms < 30, per_frame_ms


def test_thumbnails_differ_per_persona(library: PersonaLibrary) -> None:
    images = [render_thumbnail(p.avatar, 48).toImage() for p in library.personas]
    assert len({img.pixelColor(4, 24).name() for img in images}) == len(images)


def test_the_cached_head_looks_like_the_painted_one_and_is_made_once(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hair and head come from a pixmap made once per size and persona (most of a
    calm repaint's cost), and the face drawn from it matches the one painted directly."""
    made: list[float] = []
    real = avatar_module.render_head

    def counting(size: float, colours: FaceColours, ratio: float) -> QPixmap:
        made.append(size)
        return real(size, colours, ratio)

    monkeypatch.setattr(avatar_module, "render_head", counting)
    avatar = AvatarWidget(seed=1)
    qtbot.addWidget(avatar)
    avatar.resize(400, 400)
    avatar.freeze(0.0)
    for _ in range(5):
        avatar.grab()
    assert made == [400]
    avatar.resize(300, 300)
    avatar.grab()
    assert made == [400, 300]

    # breath 0 at t=0 and the centre on a whole pixel: both ways draw the same face
    size = 400
    colours = FaceColours.from_style(AvatarStyle())

    def image(head: QPixmap | None) -> QImage:
        picture = QImage(size, size, QImage.Format.Format_ARGB32)
        picture.fill(0)
        painter = QPainter(picture)
        paint_face(painter, QRectF(0, 0, size, size), colours, FacePose(t=0.0), head=head)
        painter.end()
        return picture

    direct, cached = image(None), image(real(size, colours, 1.0))
    differing = sum(
        1
        for y in range(0, size, 2)
        for x in range(0, size, 2)
        if max(abs(a - b) for a, b in zip(direct.pixelColor(x, y).getRgb(),
                                          cached.pixelColor(x, y).getRgb(), strict=True)) > 24
    )
    assert differing < 0.005 * (size // 2) ** 2, differing
