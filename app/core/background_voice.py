"""A steady voice in the room that is not the user's (a television, a radio), known by how
loud it is.

With a voice enrolled or learnt, the recognizer knows which turns were the user's and which
another voice's. A television under the user still reads as speech to the VAD: each of its
sentences opened a turn that was then dropped, it paused the reply, and a request said over
it merged with the news into one utterance that ended only when the television paused.
Once both levels are known and the other voice is clearly the quieter one, a voiced frame
no louder than the other voice's loud frames is taken for silence: the television stops
opening turns and pausing replies, and a request said over it ends when the user stops.
Louder speech (the user, a flatmate close by) is heard as before. With nobody enrolled, or
another voice about as loud as the user, nothing changes; the other voice is forgotten a
minute after it was last heard. Figures, and what was tried: docs/audio.md ("A television
under the user's voice"), ``hanasu bench room``.

Written by the recognizer's thread, read by the listener's: each write swaps one value.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from app.core.events import FloatAudio
from app.core.ports import PIPELINE_SAMPLE_RATE

FRAME_SAMPLES = 512
"""Levels are measured on the VAD's 32 ms frames..."""
ENVELOPE_FRAMES = 8
"""... as the loudest of the last eight (256 ms, about a syllable): a voice's level, not its
consonants' (frame by frame a quieter television overlaps the user's soft frames)."""
SPEECH_RANGE_DB = 35.0
"""Frames this far under an utterance's loudest are its pauses, not its speech."""
BACKGROUND_PERCENTILE = 95.0
"""The other voice's loud frames: nearly all of its speech is under this level."""
APART_DB = 8.0
"""The rule holds only while the user's typical level is this much over the other voice's
loud frames: a user who speaks about as loud as the television is never taken for it."""
ABOVE_BACKGROUND_DB = 3.0
"""The bar between speech and the other voice: this much over its loud frames, and so well
under the user's typical level (a bar half-way between cut soft request endings apart)."""
FORGET_AFTER_S = 60.0
"""The other voice is forgotten this long after it was last heard (the television is off)."""
USER_TURNS_KEPT = 5
OTHER_TURNS_KEPT = 5
STILL_THERE_AFTER_S = 0.3
"""A run of the other voice's frames this long counts as hearing it again (a word, not a
soft syllable of the user's)."""


def frame_levels(audio: FloatAudio) -> FloatAudio:
    """The dBFS level of each whole 32 ms frame of ``audio``."""
    count = audio.size // FRAME_SAMPLES
    if count == 0:
        return np.zeros(0, dtype=np.float32)
    frames = audio[:count * FRAME_SAMPLES].astype(np.float32).reshape(count, FRAME_SAMPLES)
    return _decibels(np.sqrt(np.mean(np.square(frames), axis=1)))


def _decibels(rms: FloatAudio) -> FloatAudio:
    return np.asarray(20.0 * np.log10(np.maximum(rms, 1e-9)), dtype=np.float32)


def envelope(levels: FloatAudio) -> FloatAudio:
    """Each frame's level as the loudest of it and the ``ENVELOPE_FRAMES - 1`` before it."""
    if levels.size == 0:
        return levels
    padded = np.concatenate([np.full(ENVELOPE_FRAMES - 1, -np.inf, np.float32), levels])
    windows = np.lib.stride_tricks.sliding_window_view(padded, ENVELOPE_FRAMES)
    return np.asarray(windows.max(axis=1), dtype=np.float32)


def speech_levels(audio: FloatAudio) -> FloatAudio:
    """The loudness envelope of an utterance where it carries speech (not its pauses)."""
    levels = envelope(frame_levels(audio))
    if levels.size == 0:
        return levels
    loud_enough = levels >= max(float(np.max(levels)) - SPEECH_RANGE_DB, -70.0)
    return np.asarray(levels[loud_enough], dtype=np.float32)


def frame_level(frame: FloatAudio) -> float:
    """The dBFS level of one frame, as ``frame_levels`` measures each."""
    rms = np.sqrt(np.mean(np.square(frame))) if frame.size else np.float32(0.0)
    return float(_decibels(np.asarray([rms], dtype=np.float32))[0])


class BackgroundVoice:
    def __init__(self) -> None:
        self._user_levels: deque[float] = deque(maxlen=USER_TURNS_KEPT)
        self._others: deque[tuple[float, float]] = deque(maxlen=OTHER_TURNS_KEPT)
        """(when, loud-frame level) of the other voice's recent turns."""
        self._floor_db: float | None = None
        self.heard_at = -math.inf
        """When the other voice was last heard (pipeline clock)."""
        self._run_from = self._last_masked = -math.inf
        self._recent: deque[float] = deque(maxlen=ENVELOPE_FRAMES)
        """The listener's last frame levels, while the rule holds."""

    @property
    def user_db(self) -> float | None:
        """The user's typical speech frame level over their recent requests."""
        return float(np.median(list(self._user_levels))) if self._user_levels else None

    @property
    def background_db(self) -> float | None:
        """The level of the quieter voice's loud frames: the loudest of its recent turns (one
        short turn may have been one of its quieter sentences). Turns about as loud as the
        user's are left out: a flatmate close by, or the user's own words taken for another
        voice's (a second of speech under a television makes a poor voice print), are heard
        as before and must not lift the bar."""
        user = self.user_db
        recent = [level for at, level in self._others if self.heard_at - at <= FORGET_AFTER_S
                  and (user is None or user - level >= APART_DB)]
        return max(recent) if recent else None

    def heard_user(self, audio: FloatAudio) -> None:
        """A request in the user's (enrolled or learnt) voice."""
        levels = speech_levels(audio)
        if levels.size:
            self._user_levels.append(float(np.median(levels)))
            self._update()

    def heard_other(self, audio: FloatAudio, at: float) -> None:
        """Speech in a voice that is not the user's, not addressed to the companion."""
        levels = speech_levels(audio)
        if levels.size:
            self.heard_at = at
            self._others.append((at, float(np.percentile(levels, BACKGROUND_PERCENTILE))))
            self._update()

    def _update(self) -> None:
        user, background = self.user_db, self.background_db
        if user is None or background is None:
            self._floor_db = None
            return
        self._floor_db = (background + ABOVE_BACKGROUND_DB if user - background >= APART_DB
                          else None)

    def floor_db(self, now: float) -> float | None:
        """The level under which a voiced frame is the other voice's; None: no such rule
        now (nobody else heard lately, or not clearly quieter than the user)."""
        if now - self.heard_at > FORGET_AFTER_S:
            return None
        return self._floor_db

    def over_it(self, audio: FloatAudio, now: float) -> bool:
        """Whether ``audio`` is a voice about as loud as the user's said over the known
        quieter one: its voice print is then blurred by the television under it, and the
        voice gate judges it at ``GOING_ON_SIMILARITY``."""
        user, levels = self.user_db, speech_levels(audio)
        if self.floor_db(now) is None or user is None or levels.size == 0:
            return False
        return float(np.median(levels)) >= user - APART_DB / 2

    def masks(self, frame: FloatAudio, voiced: bool, now: float) -> bool:
        """Whether this frame, ``voiced`` by the VAD, is the other voice going on (it is
        then taken for silence, and the other voice counts as still there). Every frame
        is shown here, for the envelope."""
        floor = self.floor_db(now)
        if floor is None:
            self._recent.clear()
            return False
        self._recent.append(frame_level(frame))
        if not voiced or max(self._recent) >= floor:
            return False
        if now - self._last_masked > 2.5 * FRAME_SAMPLES / PIPELINE_SAMPLE_RATE:
            self._run_from = now  # a new run of its frames
        self._last_masked = now
        if now - self._run_from >= STILL_THERE_AFTER_S:
            self.heard_at = now
        return True
