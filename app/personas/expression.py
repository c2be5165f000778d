"""How a persona's face behaves: the expression it rests in, and whether its replies are
asked to carry emotion tags (``app.core.emotion``) that the face then shows."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from app.core.emotion import Emotion


class ExpressionSettings(BaseModel):
    """``resting``: the face between sentences, while idle, and for a sentence the model
    tagged with nothing the app knows. ``tags``: the rules ask for one tag per sentence
    (off for a model that cannot keep to it: every sentence then rests)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    resting: Emotion = Emotion.NEUTRAL
    tags: bool = True
