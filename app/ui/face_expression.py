"""Expressions as numbers: each emotion (and each state's look) is a set of face
parameters, and the face blends from one set to the next instead of jumping.

``ExpressionDriver`` picks what the face should show: the emotion of the sentence now
playing (``ExpressionCue``) while speaking, a thinking look while the answer is prepared,
an attentive look (eyes on the user, a small nod at each of the user's pauses) while
listening, and the persona's resting expression otherwise. A change of target starts a
``BLEND_S`` blend from wherever the face is; while nothing blends or nods, the driver
says so (``moving``), so the calm avatar keeps its slow frame rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from app.core.emotion import Emotion
from app.core.events import AssistantState

BLEND_S = 0.2
NOD_S = 0.5
NOD_GAP_S = 1.2
"""A nod takes ``NOD_S``; pauses closer together than ``NOD_GAP_S`` get one nod."""


@dataclass(frozen=True)
class Expression:
    """Face parameters; lengths are fractions of the face radius."""

    brow_lift: float = 0.0
    brow_tilt: float = 0.0
    """Inner ends up (worried, sad) when positive, down (cross) when negative."""
    brow_skew: float = 0.0
    """The right brow higher than the left (a raised eyebrow)."""
    eye_open: float = 1.0
    eye_smile: float = 0.0
    """0..1: the lower lids rise into happy crescents."""
    eye_lid: float = 0.0
    """0..1: the upper lids come down, cutting the eyes flat (half-lidded, cross)."""
    gaze_x: float = 0.0
    gaze_y: float = 0.0
    drift: float = 1.0
    """How much of the slow idle eye drift shows (none while attentive or thinking)."""
    mouth_curve: float = 0.5
    """-1 a frown .. 1 a broad smile."""
    mouth_width: float = 1.0
    mouth_open: float = 0.0
    """0..1: the mouth opens without speaking (surprise)."""
    mouth_skew: float = 0.0
    """The right corner up, the left down (a smirk, a doubtful line)."""
    blush: float = 0.0
    """0..1 more colour in the cheeks (1 adds blush lines)."""

    def toward(self, other: Expression, k: float) -> Expression:
        """``k`` of the way to ``other`` (0: self, 1: other)."""
        return Expression(*(getattr(self, f.name) + (getattr(other, f.name)
                                                     - getattr(self, f.name)) * k
                            for f in fields(self)))


NEUTRAL = Expression()
EXPRESSIONS: dict[Emotion, Expression] = {
    Emotion.NEUTRAL: NEUTRAL,
    Emotion.HAPPY: Expression(brow_lift=0.05, eye_smile=0.85, mouth_curve=1.0,
                              mouth_width=1.2, mouth_open=0.45, blush=0.35, drift=0.5),
    Emotion.SAD: Expression(brow_lift=0.02, brow_tilt=0.1, eye_lid=0.2, gaze_y=0.05,
                            mouth_curve=-0.7, mouth_width=0.8, drift=0.3),
    Emotion.SURPRISED: Expression(brow_lift=0.13, eye_open=1.3, mouth_curve=0.0,
                                  mouth_width=0.6, mouth_open=1.0, drift=0.0),
    Emotion.THINKING: Expression(brow_lift=0.05, brow_skew=0.05, gaze_x=0.05, gaze_y=-0.07,
                                 drift=0.0, mouth_curve=0.0, mouth_width=0.55, mouth_skew=0.4),
    Emotion.SMUG: Expression(brow_lift=0.01, brow_skew=0.07, eye_lid=0.45, gaze_x=0.05,
                             mouth_curve=0.5, mouth_width=0.9, mouth_skew=0.9, drift=0.0),
    Emotion.EMBARRASSED: Expression(brow_tilt=0.07, eye_smile=0.3, gaze_x=-0.07, gaze_y=0.05,
                                    mouth_curve=0.15, mouth_width=0.6, blush=1.0, drift=0.0),
    Emotion.ANGRY: Expression(brow_lift=-0.02, brow_tilt=-0.11, eye_lid=0.25,
                              mouth_curve=-0.55, mouth_width=0.85, drift=0.0),
}
ATTENTIVE = Expression(brow_lift=0.04, eye_open=1.08, gaze_y=-0.01, drift=0.0,
                       mouth_curve=0.35, mouth_width=0.7)
"""Listening: eyes a little wider and on the user, brows up, a small closed smile."""
MUTED_FACE = Expression(eye_open=0.35, drift=0.3)
ERROR_FACE = Expression(brow_tilt=0.06, mouth_curve=-0.5, mouth_width=0.8)


def _smooth(k: float) -> float:
    k = min(1.0, max(0.0, k))
    return k * k * (3.0 - 2.0 * k)


class ExpressionDriver:
    """The face's target and where the blend toward it has got, on the widget's clock."""

    def __init__(self) -> None:
        self.resting = Emotion.NEUTRAL
        self.spoken: Emotion | None = None
        """The emotion cued for the sentence now playing (None: the resting face)."""
        self._target = NEUTRAL
        self._from = NEUTRAL
        self._since = -math.inf
        self._nod_at = -math.inf
        self._pending_nod = False

    def target(self, state: AssistantState) -> Expression:
        rest = EXPRESSIONS[self.resting]
        match state:
            case AssistantState.SPEAKING:
                return EXPRESSIONS[self.spoken] if self.spoken is not None else rest
            case AssistantState.THINKING:
                return EXPRESSIONS[Emotion.THINKING]
            case AssistantState.LISTENING:  # the persona's own face, eyes on the user
                return replace(rest.toward(ATTENTIVE, 0.75), gaze_x=ATTENTIVE.gaze_x,
                               gaze_y=ATTENTIVE.gaze_y, drift=ATTENTIVE.drift)
            case AssistantState.MUTED:
                return MUTED_FACE
            case AssistantState.ERROR:
                return ERROR_FACE
            case _:
                return rest

    def nod(self) -> None:
        """The user paused: nod at the next frame (one per ``NOD_GAP_S``)."""
        self._pending_nod = True

    def update(self, state: AssistantState, t: float) -> tuple[Expression, float]:
        """The face and the nod (0..1 of its depth) at widget time ``t``."""
        target = self.target(state)
        if target != self._target:
            self._from, self._target, self._since = self._blended(t), target, t
        if self._pending_nod:
            self._pending_nod = False
            if state is AssistantState.LISTENING and t - self._nod_at >= NOD_GAP_S:
                self._nod_at = t
        return self._blended(t), self._nodding(t)

    def snap(self, state: AssistantState) -> Expression:
        """Show the target at once (screenshots, a persona switch)."""
        self._target = self._from = self.target(state)
        self._since = -math.inf
        return self._target

    def moving(self, t: float) -> bool:
        """A blend or a nod is under way (or due): the avatar must keep painting."""
        return (self._pending_nod or t - self._since < BLEND_S
                or t - self._nod_at < NOD_S)

    def _blended(self, t: float) -> Expression:
        k = (t - self._since) / BLEND_S
        return self._target if k >= 1.0 else self._from.toward(self._target, _smooth(k))

    def _nodding(self, t: float) -> float:
        phase = (t - self._nod_at) / NOD_S
        return math.sin(math.pi * phase) if 0.0 <= phase < 1.0 else 0.0
