"""Whether a persona speaks first after a long silence (``[checkin]``, off by default)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CheckInSettings(BaseModel):
    """``after_minutes``: how long the room must have been quiet (no voice, nothing said)
    before the persona checks in, once; absent: never. ``welcome_back``: greet the user
    when they come back to the computer after ``away_minutes`` without touching it.
    ``every_minutes``: at most one of either per this many minutes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    after_minutes: float | None = Field(default=None, ge=0.05, le=24 * 60)
    every_minutes: float = Field(default=60.0, ge=0.05, le=7 * 24 * 60)
    welcome_back: bool = False
    away_minutes: float = Field(default=15.0, ge=0.05, le=24 * 60)

    @property
    def enabled(self) -> bool:
        return self.after_minutes is not None or self.welcome_back
