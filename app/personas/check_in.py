"""Whether a persona speaks first after a long silence (``[checkin]``, off by default)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CheckInSettings(BaseModel):
    """``after_minutes``: how long the room must have been quiet (no voice, nothing said)
    before the persona checks in, once; absent: never. ``every_minutes``: at most one
    check-in per this many minutes, however long the silence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    after_minutes: float | None = Field(default=None, ge=0.05, le=24 * 60)
    every_minutes: float = Field(default=60.0, ge=0.05, le=7 * 24 * 60)
