"""The animated avatar: a QTimer at ~33 fps advances blink, breathing and lip-sync.

The tick only updates a few floats and schedules a repaint; all drawing is in face.py
(and the face_* modules it uses).
While nothing moves fast (idle, muted or error; no blink due; mouth closed) the timer
slows to 10 fps: only the slow breathing and eye drift move then (under 0.3 px a frame),
and every frame is a full repaint, so 33 fps there was most of the app's idle CPU. In those
calm states a frame is only repainted when it would look different: a blink, the mouth,
or the breath / eye drift having moved a whole pixel since the last paint (about 2 paints
a second instead of 5, and none in the 0.2 s before a blink).
The mouth follows the lip-sync timelines (``lip_sync``) on the pipeline clock once
``play_clock`` is set: shape and opening at the sample the speaker plays. Without them
(no clock, a view in a dialog) it follows PlaybackLevel through an attack/release smoother.
The expression (``face_expression``) blends toward each sentence's emotion as it starts to
play, toward the thinking and attentive looks, and back to the persona's resting face; a
blend or a nod keeps the fast frame rate only while it lasts.
The timer stops while the widget is hidden (the full window behind the desktop pet, or in
the tray): a face nobody sees needs no frames.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from PySide6.QtCore import QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QPainter, QPaintEvent, QPixmap, QShowEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.core.emotion import Emotion
from app.core.events import AssistantState
from app.core.telemetry import MouthCue
from app.core.visemes import Viseme
from app.personas.model import AvatarStyle
from app.ui.face import paint_face, paint_marks, render_backdrop, render_head
from app.ui.face_expression import NEUTRAL, Expression, ExpressionDriver
from app.ui.face_pose import FaceColours, FacePose, breathing, eye_drift
from app.ui.layered_avatar import LayeredPainter, LayerImages
from app.ui.lip_sync import LipSync

FRAME_MS = 30
CALM_FRAME_MS = 200
"""Frame interval while only breathing and eye drift move (see ``_calm``)."""
ANIMATED_STATES = (AssistantState.LISTENING, AssistantState.THINKING, AssistantState.SPEAKING)
BLINK_S = 0.14
VISIBLE_PX = 1.0
"""In calm states, slow motion (breath, eye drift) repaints once it has moved this far."""
LEVEL_GAIN = 6.0
"""Playback RMS ~0.05-0.2 for speech; this maps it to a mouth opening of 0..1."""


class AvatarWidget(QWidget):
    """Paints the persona's face in the assistant's current state. ``bare``: no card behind
    the face (the desktop pet's, on a translucent window)."""

    looks_changed = Signal()
    """The state, style or picture changed (a second view, the desktop pet, follows it)."""
    covered = False
    """A Live2D model (``live2d_host``) is drawn over the whole widget: nothing to paint."""

    def __init__(self, style: AvatarStyle | None = None, parent: QWidget | None = None,
                 seed: int | None = None, bare: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("avatar")
        self.setMinimumSize(160, 160)
        self._bare = bare
        self._frozen = False
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._style = style or AvatarStyle()
        self._colours = FaceColours.from_style(self._style)
        self._backdrop: QPixmap | None = None
        self._head: QPixmap | None = None
        """The cached hair and head (``render_head``), with the backdrop per size/persona."""
        self._picture: QPixmap | None = None
        self._layered: LayeredPainter | None = None
        """A layered-PNG avatar (``layered_avatar``), shown instead of face and picture."""
        self._backdrop_key: tuple[object, ...] | None = None
        self._state = AssistantState.IDLE
        self._message = ""
        self._target_level = 0.0
        self._mouth = 0.0
        self._viseme: Viseme | None = None
        self._lips = LipSync()
        self.play_clock: Callable[[], float] | None = None
        """The pipeline's clock (``MonotonicClock.now``): mouth cues are stamped on it."""
        self._t0 = time.monotonic()
        self._t = 0.0
        self._rng = random.Random(seed)
        self._next_blink = self._t + self._rng.uniform(1.5, 4.5)
        self._blink = 0.0
        self._driver = ExpressionDriver()
        self.nods = 0
        """How many nods were asked for (a mirror nods along)."""
        self._nods_seen = 0
        self._face: Expression = NEUTRAL
        self._nod = 0.0
        self.frames = 0
        self.paints = 0
        self._painted: tuple[AssistantState, float, float, float, float, Expression,
                             float] | None = None
        """(state, blink, mouth, breath px, eye drift px, expression, nod) of the last paint."""
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    # ---- what the window sets --------------------------------------------------------

    @property
    def state(self) -> AssistantState:
        return self._state

    @property
    def avatar_style(self) -> AvatarStyle:
        return self._style

    @property
    def mouth(self) -> float:
        return self._mouth

    @property
    def message(self) -> str:
        """The error shown under the face (empty unless the state is ERROR)."""
        return self._message

    def set_avatar_style(self, style: AvatarStyle) -> None:
        self._style = style
        self._colours = FaceColours.from_style(style)
        self.update()
        self.looks_changed.emit()

    def set_picture(self, picture: QPixmap | None) -> None:
        """A persona's picture (round) shown instead of the drawn face; None: the face."""
        self._picture = picture
        self.update()
        self.looks_changed.emit()

    def set_layers(self, layers: LayerImages | None) -> None:
        """A persona's layered avatar (decoded by ``layered_avatar.load_layers``); None:
        the picture or the drawn face."""
        if self.layers is layers:
            return
        self._layered = None if layers is None else LayeredPainter(layers)
        self.update()
        self.looks_changed.emit()

    @property
    def layers(self) -> LayerImages | None:
        return None if self._layered is None else self._layered.images

    @property
    def layered(self) -> LayeredPainter | None:
        return self._layered

    @property
    def feeling(self) -> Emotion:
        """The emotion a layered avatar shows now: the sentence's while one plays, else
        the resting one."""
        if self._state is AssistantState.SPEAKING and self._driver.spoken is not None:
            return self._driver.spoken
        return self._driver.resting

    def mirror(self, source: AvatarWidget) -> None:
        """Show what ``source`` shows: its state, message, style, picture and expression
        (its resting face, the sentence's emotion, its nods)."""
        if self._style != source.avatar_style:
            self.set_avatar_style(source.avatar_style)
        if self._picture is not source.picture:
            self.set_picture(source.picture)
        if self.layers is not source.layers:
            self.set_layers(source.layers)
        if (self._state, self._message) != (source.state, source.message):
            self.set_state(source.state, source.message)
        if self._driver.resting is not source.resting:
            self.set_resting(source.resting)
        if self._driver.spoken is not source.spoken:
            self.cue(source.spoken)
        if self._nods_seen != source.nods:
            self._nods_seen = source.nods
            self.nod()

    @property
    def picture(self) -> QPixmap | None:
        return self._picture

    def set_state(self, state: AssistantState, message: str = "") -> None:
        self._state = state
        self._message = message if state is AssistantState.ERROR else ""
        if state is not AssistantState.SPEAKING:
            self._target_level = 0.0
        self._follow()
        self.looks_changed.emit()

    def set_resting(self, emotion: Emotion) -> None:
        """The persona's resting expression (shown at once: a new persona)."""
        self._driver.resting = emotion
        self._face = self._driver.snap(self._state)
        self.update()
        self.looks_changed.emit()

    @property
    def resting(self) -> Emotion:
        return self._driver.resting

    @property
    def spoken(self) -> Emotion | None:
        """The emotion cued for the sentence now playing (None: the resting face)."""
        return self._driver.spoken

    def cue(self, emotion: Emotion | None) -> None:
        """The sentence now playing is said with ``emotion`` (None: the resting face)."""
        self._driver.spoken = emotion
        self._follow()
        self.looks_changed.emit()

    def end_of_reply(self) -> None:
        """The reply stopped playing: the face goes back to rest."""
        self.cue(None)

    def nod(self) -> None:
        """The user paused while speaking: a small nod."""
        self._driver.nod()
        self.nods += 1
        self._follow()
        self.looks_changed.emit()

    @property
    def expression(self) -> Expression:
        return self._face

    def show_expression(self, emotion: Emotion | None) -> None:
        """Speak with ``emotion`` at once, without a blend (screenshots and tests)."""
        self._driver.spoken = emotion
        self._face = self._driver.snap(self._state)
        self.update()

    def _follow(self) -> None:
        """A target changed: step now (at the current widget time) and pace the timer."""
        if not self._frozen:  # a calm frame may be 200 ms old: blend from now
            self._t = max(self._t, time.monotonic() - self._t0)
        self._face, self._nod = self._driver.update(self._state, self._t)
        self._pace()
        self.update()
        self.looks_changed.emit()

    def set_level(self, level: float) -> None:
        """Playback RMS from PlaybackLevel; drives the mouth while speaking."""
        self._target_level = min(1.0, max(0.0, level * LEVEL_GAIN))

    def mouth_cue(self, cue: MouthCue) -> None:
        """A chunk's mouth timeline (or the silence after it) cued at its play time."""
        self._lips.cue(cue)
        self._pace()

    @property
    def viseme(self) -> Viseme | None:
        return self._viseme

    def pose(self) -> FacePose:
        return FacePose(self._state, self._blink, self._mouth, self._t, self._message,
                        self._face, self._nod, self._viseme)

    def freeze(self, t: float, blink: float = 0.0, mouth: float | None = None,
               viseme: Viseme | None = None) -> None:
        """Stop animating at a fixed pose (screenshots and tests)."""
        self._frozen = True
        self._timer.stop()
        self._t, self._blink, self._viseme = t, blink, viseme
        if mouth is not None:
            self._mouth = mouth
        self._face, self._nod = self._driver.snap(self._state), 0.0
        self.update()

    # ---- animation -------------------------------------------------------------------

    def _tick(self) -> None:
        self.advance(time.monotonic() - self._t0)

    def advance(self, t: float) -> None:
        """One animation step at widget time ``t`` (seconds); tests drive it directly."""
        self._t = t
        self.frames += 1
        self._advance_blink()
        self._advance_mouth()
        self._face, self._nod = self._driver.update(self._state, t)
        self._pace()
        if self._state in ANIMATED_STATES or self._looks_different():
            self.update()

    def _advance_mouth(self) -> None:
        """A timeline's opening is the sound's (smoothed over 20 ms), shown as it is (a
        smoother would show it late and hide short closures) until its closing cue, whatever
        the state: the state leaves SPEAKING when the last block is queued, ~0.1 s before it
        is heard. The level's is softened against flicker and only shown while speaking."""
        if self.play_clock is not None and self._lips.active:
            self._viseme, self._mouth = self._lips.at(self.play_clock())
            return
        target = self._target_level if self._state is AssistantState.SPEAKING else 0.0
        self._viseme = None
        self._mouth += (target - self._mouth) * (0.6 if target > self._mouth else 0.25)

    def _looks_different(self) -> bool:
        """Whether a calm frame would differ visibly from the last one painted."""
        if self._painted is None:
            return True
        state, blink, mouth, breath, drift, face, nod = self._painted
        size = min(self.width(), self.height())
        return (state is not self._state or blink != self._blink
                or face != self._face or nod != self._nod
                or abs(mouth - self._mouth) > 0.005
                or abs(breath - breathing(size, self._t)) >= VISIBLE_PX
                or abs(drift - eye_drift(size, self._t)) >= VISIBLE_PX)

    def _calm(self) -> bool:
        """Nothing fast to animate: no lively state, mouth closed, no blink now or next frame."""
        return (self._state not in ANIMATED_STATES and not self._lips.active
                and self._mouth < 0.01 and self._blink == 0.0
                and self._t + CALM_FRAME_MS / 1000 < self._next_blink
                and not self._driver.moving(self._t))

    def _pace(self) -> None:
        interval = CALM_FRAME_MS if self._calm() else FRAME_MS
        if self._timer.interval() != interval:
            self._timer.setInterval(interval)  # a stopped (frozen) timer stays stopped

    @property
    def blink(self) -> float:
        return self._blink

    def _advance_blink(self) -> None:
        if self._t < self._next_blink:
            self._blink = 0.0
            return
        phase = (self._t - self._next_blink) / BLINK_S
        if phase >= 1.0:
            self._blink = 0.0
            double = self._rng.random() < 0.15
            self._next_blink = self._t + (0.25 if double else self._rng.uniform(2.0, 6.0))
            return
        self._blink = 1.0 - abs(2.0 * phase - 1.0)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._frozen and not self._timer.isActive():
            self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._timer.stop()

    @property
    def animating(self) -> bool:
        """Whether the frame timer runs (not while hidden or frozen)."""
        return self._timer.isActive()

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.covered:
            return
        ratio = self.devicePixelRatioF()
        key = (self.width(), self.height(), ratio, self._colours)
        if self._head is None or self._backdrop_key != key:
            self._backdrop = None if self._bare else render_backdrop(
                self.width(), self.height(), self._colours, ratio)
            self._head = render_head(min(self.width(), self.height()), self._colours, ratio)
            self._backdrop_key = key
        painter = QPainter(self)
        rect, pose = QRectF(self.rect()), self.pose()
        if self._layered is not None:
            if self._backdrop is not None:
                painter.drawPixmap(rect.topLeft(), self._backdrop)
            self._layered.paint(painter, rect, self._colours, pose, self.feeling, ratio)
            size = min(rect.width(), rect.height())
            paint_marks(painter, rect, rect.center(), size * 0.3, self._colours, pose,
                        bare=self._bare)
        else:
            paint_face(painter, rect, self._colours, pose, backdrop=self._backdrop,
                       picture=self._picture, head=self._head, bare=self._bare,
                       mouth_at=self._style.mouth_at)
        painter.end()
        size = min(self.width(), self.height())
        self._painted = (self._state, self._blink, self._mouth, breathing(size, self._t),
                         eye_drift(size, self._t), self._face, self._nod)
        self.paints += 1

    def sizeHint(self) -> QSize:
        return QSize(420, 420)

