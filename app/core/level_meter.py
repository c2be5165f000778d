"""When the microphone meter needs a new level: when it moves, for a trail after that (the
meter eases down on each update), and else once a second, so a silent microphone does not
wake the controller and GUI threads 20 times a second."""

from __future__ import annotations

LEVEL_STEP_DB = 1.0
"""A level this far (dB on the meter's scale) from the last one sent is sent at once..."""
LEVEL_TRAIL = 12
"""...and the next this many (0.6 s: the meter eases 30 % of the way down per update)..."""
LEVEL_REFRESH_S = 1.0
"""...and any level at least this often."""


class LevelThrottle:
    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self._published_db = 1.0  # off the meter's scale: the first level is always sent
        self._published_at = 0
        self._trail = 0

    def wants(self, shown_db: float, position: int) -> bool:
        """Whether a level of ``shown_db`` at sample ``position`` is to be published."""
        if abs(shown_db - self._published_db) >= LEVEL_STEP_DB:
            self._trail = LEVEL_TRAIL
        elif self._trail > 0:
            self._trail -= 1
        elif position - self._published_at < self.sample_rate * LEVEL_REFRESH_S:
            return False
        self._published_db, self._published_at = shown_db, position
        return True
