"""The face shows the mouth shape heard at the play clock: each shape draws its own mouth
(rendered to tests/ui/screenshots/mouth-shapes.png; with ``HANASU_SCREENS=docs/screens``
also there), the avatar reads the cued timeline at the pipeline clock, not when a cue
arrives, the window's face does so in a live (fake-engine) conversation, and a layered
avatar takes a shape's own picture when it has one."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from pytestqt.qtbot import QtBot

from app.core.events import AssistantState
from app.core.mouth_track import MouthTrack
from app.core.pipeline import VoicePipeline
from app.core.telemetry import MouthCue
from app.core.visemes import Viseme
from app.personas.avatar_layers import AvatarLayers
from app.ui.avatar import AvatarWidget
from app.ui.bridge import EventBridge
from app.ui.face_pose import FacePose
from app.ui.layered_avatar import load_layers
from app.ui.lip_sync import KEEP, LEAD_S, LipSync
from app.ui.window import MainWindow
from tests.ui import avatar_art
from tests.ui.conftest import Speaker, feed, utterance

SHOTS = Path(__file__).parent / "screenshots"
MOUTH_INSIDE = QColor("#5a2430").rgb()


def _avatar(qtbot: QtBot) -> AvatarWidget:
    avatar = AvatarWidget(seed=3)
    qtbot.addWidget(avatar)
    avatar.resize(240, 240)
    avatar.show()
    qtbot.waitExposed(avatar)
    avatar.freeze(10.0)
    avatar.set_state(AssistantState.SPEAKING)
    return avatar


def _mouth_box(image: QImage) -> tuple[int, int]:
    """Width and height (px) of the open mouth's dark inside."""
    xs, ys = [], []
    for y in range(image.height() // 2, image.height()):
        for x in range(image.width()):
            if image.pixel(x, y) == MOUTH_INSIDE:
                xs.append(x)
                ys.append(y)
    return (max(xs) - min(xs) + 1, max(ys) - min(ys) + 1) if xs else (0, 0)


def _track(*shapes: tuple[Viseme, float, int]) -> MouthTrack:
    """A timeline of (shape, opening, hops) runs."""
    visemes = [v for v, _, n in shapes for _ in range(n)]
    openings = [o for _, o, n in shapes for _ in range(n)]
    return MouthTrack(tuple(openings), tuple(visemes))


def test_each_shape_draws_its_own_mouth(qtbot: QtBot) -> None:
    avatar = _avatar(qtbot)
    images: dict[Viseme, QImage] = {}
    for viseme in Viseme:
        avatar.freeze(10.0, mouth=0.9, viseme=viseme)
        images[viseme] = avatar.grab().toImage()
    boxes = {v: _mouth_box(image) for v, image in images.items()}
    assert boxes[Viseme.CLOSED] == (0, 0)  # a line, no open inside
    a, i, u, e, o = (boxes[v] for v in (Viseme.A, Viseme.I, Viseme.U, Viseme.E, Viseme.O))
    assert i[0] > a[0] > u[0] and o[0] > u[0]  # "i" spreads the lips, "u" purses them
    assert a[1] > e[1] > i[1] and o[1] > u[1]  # "a" opens widest, "i" nearly shuts
    assert len(set(boxes.values())) == len(Viseme)
    strip = QImage(240 * len(Viseme), 240, QImage.Format.Format_ARGB32_Premultiplied)
    strip.fill(Qt.GlobalColor.white)
    painter = QPainter(strip)
    for k, viseme in enumerate(Viseme):
        painter.drawImage(QPoint(240 * k, 0), images[viseme].scaled(240, 240))
    painter.end()
    folders = [SHOTS] + ([Path(os.environ["HANASU_SCREENS"])]
                         if os.environ.get("HANASU_SCREENS") else [])
    for folder in folders:
        folder.mkdir(exist_ok=True)
        assert strip.save(str(folder / "mouth-shapes.png"))


def test_the_avatar_shows_the_shape_heard_at_the_play_clock(qtbot: QtBot) -> None:
    avatar = _avatar(qtbot)
    now = [4.0]
    avatar.play_clock = lambda: now[0]
    track = _track((Viseme.A, 1.0, 10), (Viseme.I, 0.5, 10), (Viseme.CLOSED, 0.0, 5),
                   (Viseme.O, 0.8, 10))
    avatar.mouth_cue(MouthCue(1, 0, track, at=5.0))  # arrives a second before it sounds
    avatar.mouth_cue(MouthCue(1, -1, None, at=5.35))

    def seen(at: float) -> tuple[Viseme | None, float]:
        now[0] = at - LEAD_S
        avatar.advance(at)
        return avatar.viseme, avatar.mouth

    assert seen(4.5) == (Viseme.CLOSED, 0.0)  # cued, not yet sounding
    assert seen(5.05) == (Viseme.A, 1.0)
    assert seen(5.15) == (Viseme.I, 0.5)
    assert seen(5.22) == (Viseme.CLOSED, 0.0)  # a closure inside the chunk shows
    avatar.set_state(AssistantState.IDLE)  # the last block is queued, not yet heard
    assert seen(5.3) == (Viseme.O, 0.8)  # so the mouth goes on with the sound
    assert seen(5.36) == (Viseme.CLOSED, 0.0)  # the silence after it, when it is heard
    avatar.advance(5.4)
    assert avatar.pose().viseme is None


def test_a_cue_reaches_the_avatar_through_the_bridge(qtbot: QtBot) -> None:
    bridge = EventBridge()
    cue = MouthCue(3, 1, _track((Viseme.E, 0.7, 3)), at=1.0)
    with qtbot.waitSignal(bridge.mouth, timeout=2000) as signal:
        bridge.post(cue)
    assert signal.args == [cue]


def test_resumed_chunks_play_on_from_their_offset_and_old_cues_go() -> None:
    lips = LipSync()
    track = _track((Viseme.A, 1.0, 10), (Viseme.U, 0.6, 10))
    lips.cue(MouthCue(1, 0, None, at=2.05))  # cues may come in any order
    lips.cue(MouthCue(1, 0, track, at=2.0))
    lips.cue(MouthCue(1, 0, track, at=3.0, offset=0.1))  # after a pause, from 0.1 s on
    assert lips.at(2.02 - LEAD_S) == (Viseme.A, 1.0)
    assert lips.at(2.06 - LEAD_S) == (Viseme.CLOSED, 0.0)
    assert lips.at(3.02 - LEAD_S) == (Viseme.U, 0.6)
    for k in range(KEEP * 2):
        lips.cue(MouthCue(1, k, track, at=10.0 + k))
    assert len(lips._cues) == KEEP


def test_a_layered_avatar_takes_each_shapes_own_picture(qtbot: QtBot, tmp_path: Path) -> None:
    folder = avatar_art.write_pack(tmp_path)
    for name, opening in (("a.png", 1.0), ("u.png", 0.3)):
        assert avatar_art.mouth(opening).save(str(folder / name))
    layers = AvatarLayers(base="idle.png", mouth_closed="mouth_closed.png",
                          mouth_open="talk.png", mouths={"a": "a.png", "u": "u.png"})
    avatar = _avatar(qtbot)
    avatar.set_layers(load_layers(folder, layers))
    painter = avatar.layered
    assert painter is not None
    speaking = AssistantState.SPEAKING
    assert painter.names(FacePose(speaking, mouth=0.8, viseme=Viseme.A), None)[-1] == "a.png"
    assert painter.names(FacePose(speaking, mouth=0.5, viseme=Viseme.U), None)[-1] == "u.png"
    assert painter.names(FacePose(speaking, mouth=0.8, viseme=Viseme.E), None)[-1] == "talk.png"
    assert painter.names(FacePose(speaking, mouth=0.8), None)[-1] == "talk.png"
    avatar.freeze(10.0, mouth=0.9, viseme=Viseme.A)
    wide = avatar.grab().toImage()
    avatar.freeze(10.0, mouth=0.9, viseme=Viseme.U)
    assert wide != avatar.grab().toImage()


def test_the_windows_face_moves_its_mouth_on_the_pipelines_clock(
        qtbot: QtBot, window: MainWindow, pipeline: VoicePipeline) -> None:
    assert window.avatar.play_clock is not None  # set by attach_pipeline
    speaker = Speaker(pipeline)
    try:
        feed(pipeline, *utterance())  # the fake engines answer with a tone per chunk

        def open_shape() -> bool:
            return window.avatar.viseme not in (None, Viseme.CLOSED) and window.avatar.mouth > 0

        qtbot.waitUntil(open_shape, timeout=5000)
        qtbot.waitUntil(lambda: window.avatar.state is not AssistantState.SPEAKING,
                        timeout=10000)
    finally:
        speaker.stop()


def test_a_timeline_that_ran_out_ends_even_without_its_closing_cue() -> None:
    lips = LipSync()
    lips.cue(MouthCue(1, 0, _track((Viseme.A, 1.0, 10)), at=2.0))
    assert lips.at(2.05 - LEAD_S) == (Viseme.A, 1.0)
    assert lips.active
    assert lips.at(2.2) == (Viseme.CLOSED, 0.0)
    assert not lips.active  # the face may slow its frames again
