"""What the face looks like and does: its colours (built once per persona), this frame's
pose, and the slow motions (breath, eye drift) the avatar and the painter share."""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtGui import QColor

from app.core.events import AssistantState
from app.core.visemes import Viseme
from app.personas.model import AvatarStyle
from app.ui.face_expression import NEUTRAL, Expression


@dataclass(frozen=True)
class FaceColours:
    """QColors built once per persona, so a paint allocates nothing from strings."""

    skin: QColor
    skin_shade: QColor
    hair: QColor
    hair_light: QColor
    accent: QColor
    background: QColor
    background_edge: QColor
    eye: QColor
    blush: QColor

    @classmethod
    def from_style(cls, style: AvatarStyle) -> FaceColours:
        skin = QColor(style.skin)
        accent = QColor(style.accent)
        blush = QColor(accent)
        blush.setAlpha(70)
        background = QColor(style.background)
        return cls(
            skin=skin,
            skin_shade=skin.darker(118),
            hair=QColor(style.hair),
            hair_light=QColor(style.hair).lighter(135),
            accent=accent,
            background=background.lighter(135),
            background_edge=background.darker(140),
            eye=QColor("#231a24"),
            blush=blush,
        )


@dataclass(frozen=True)
class FacePose:
    """What the face does this frame."""

    state: AssistantState = AssistantState.IDLE
    blink: float = 0.0
    """0 = eyes open, 1 = closed."""
    mouth: float = 0.0
    """0 = closed, 1 = wide open (speaking)."""
    t: float = 0.0
    """Seconds since the widget started, for breathing, pulses and the thinking dots."""
    message: str = ""
    """Shown under the face in the error state."""
    expression: Expression = NEUTRAL
    """Brows, eyes and mouth (``face_expression``), blended by the avatar."""
    nod: float = 0.0
    """0..1: how far down the head is in a nod."""
    viseme: Viseme | None = None
    """The mouth's shape from lip-sync (None: only the opening, from the level)."""


def nod_offset(size: float, nod: float) -> float:
    """How far (px) a nod moves the face down."""
    return nod * size * 0.022


def breathing(size: float, t: float) -> float:
    """How far (px) the face has moved down with its breath at ``t``."""
    return math.sin(t * 1.6) * size * 0.004


def eye_drift(size: float, t: float) -> float:
    """How far (px) the eyes have drifted sideways at ``t`` in a calm state (see ``_look``)."""
    return size * 0.3 * 0.02 * math.sin(t * 0.35)
