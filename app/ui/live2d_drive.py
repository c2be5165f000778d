"""What a Live2D model does each frame, from the same inputs as the drawn face.

The avatar widget stays the one place that turns the playback level into a smoothed mouth,
times the blinks, and knows the state, the nod and the feeling shown (``AvatarFeed``);
the model only mirrors them through Cubism's standard parameters (those it has, under
their Cubism 3 names or Cubism 2's) and its expressions (one named like the feeling, any
case; ``teasing`` also for smug). Kept free of OpenGL, so the mapping is tested with a
stand-in model.
"""

from __future__ import annotations

from typing import Protocol

from app.core.emotion import Emotion
from app.core.events import AssistantState
from app.ui.face_pose import FacePose
from app.ui.live2d_runtime import Live2DModel

MOUTH = "ParamMouthOpenY"
EYES = ("ParamEyeLOpen", "ParamEyeROpen")
HEAD_DOWN = "ParamAngleY"
HEAD_TILT = "ParamAngleZ"
LOOK_UP = "ParamEyeBallY"
NOD_DEGREES = 12.0
THINKING_TILT = 8.0
CUBISM2_NAMES = {MOUTH: "PARAM_MOUTH_OPEN_Y", EYES[0]: "PARAM_EYE_L_OPEN",
                 EYES[1]: "PARAM_EYE_R_OPEN", HEAD_DOWN: "PARAM_ANGLE_Y",
                 HEAD_TILT: "PARAM_ANGLE_Z", LOOK_UP: "PARAM_EYE_BALL_Y"}
ALIASES = {Emotion.SMUG: ("smug", "teasing"), Emotion.HAPPY: ("happy", "joy", "smile"),
           Emotion.SURPRISED: ("surprised", "surprise"), Emotion.EMBARRASSED:
           ("embarrassed", "blush", "shy"), Emotion.ANGRY: ("angry", "mad")}


class AvatarFeed(Protocol):
    """What a renderer reads from the avatar widget (``AvatarWidget`` is one)."""

    def pose(self) -> FacePose: ...

    @property
    def feeling(self) -> Emotion: ...


def expression_for(emotion: Emotion, state: AssistantState,
                   names: dict[str, str]) -> str | None:
    """The model's expression for ``emotion`` (``names``: lower-case name to the model's
    own), thinking while it thinks; None: the model's own face."""
    if state is AssistantState.THINKING and "thinking" in names:
        return names["thinking"]
    if emotion is Emotion.NEUTRAL:
        return names.get("neutral")
    for word in ALIASES.get(emotion, (emotion.value,)):
        if word in names:
            return names[word]
    return None


class ModelDriver:
    """Drives one loaded model; remembers its parameters, expressions and the expression
    set last, so an unchanged feeling sets nothing."""

    def __init__(self, model: Live2DModel) -> None:
        self.model = model
        self.params = frozenset(model.GetParamIds())
        self.expressions = {name.lower(): name for name in model.GetExpressions()}
        self.expression: str | None = None
        model.SetAutoBlink(False)  # the avatar times the blinks, as for the drawn face

    def _set(self, param: str, value: float) -> None:
        if param in self.params:
            self.model.SetParamById(param, value)
        elif CUBISM2_NAMES.get(param) in self.params:
            self.model.SetParamById(CUBISM2_NAMES[param], value)

    def apply(self, pose: FacePose, feeling: Emotion) -> None:
        """This frame's pose onto the model (after its own Update, before Draw)."""
        self._set(MOUTH, max(0.0, min(1.0, pose.mouth)))
        for eye in EYES:
            self._set(eye, 1.0 - max(0.0, min(1.0, pose.blink)))
        if pose.nod:
            self._set(HEAD_DOWN, -NOD_DEGREES * pose.nod)
        if pose.state is AssistantState.THINKING:
            self._set(HEAD_TILT, THINKING_TILT)
            self._set(LOOK_UP, 0.5)
        wanted = expression_for(feeling, pose.state, self.expressions)
        if wanted != self.expression:
            if wanted is None:
                self.model.ResetExpression()
            else:
                self.model.SetExpression(wanted)
            self.expression = wanted
