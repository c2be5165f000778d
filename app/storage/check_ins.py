"""Speaking first: a persona's check-in after a long silence, and its welcome when the user
comes back to the computer (``[checkin]``, both off by default).

Once the room has been quiet for the persona's ``after_minutes`` (no voice, nothing said by
either side) and the last check-in is at least ``every_minutes`` old, the model is asked, in
the background and with the conversation so far, for one short line in character; the line
is said like a timer that rang (``VoicePipeline.announce``: into silence only, shown while
muted, kept in the history once heard). A turn or a voice starting meanwhile cancels the
request (the pipeline's background work yields to the user), and the clock starts again.

Where the system says how long since the last keyboard or mouse input (``user_idle``), a
user who has not touched the computer for the whole silence is taken to be away: no
check-in is said to an empty room. With ``welcome_back``, the first input after at least
``away_minutes`` away asks for a welcome instead (same interval, same manners).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from app.core.character import breaks_character
from app.core.events import PipelineEvent, PlaybackEnded, SpeechStarted, TurnCommitted
from app.core.pipeline import VoicePipeline
from app.core.sentences import SentenceGate
from app.personas.check_in import CheckInSettings

log = logging.getLogger(__name__)

POLL_S = 5.0
"""How often the silence is measured (a check-in comes at most this late)."""
INSTRUCTION = (
    "(The user has been quiet for {minutes}. Say one short, warm sentence to check in on "
    "them, in character and in the language you always speak with them; if it fits, refer "
    "to what you talked about. Only the sentence.)"
)
WELCOME = (
    "(The user just came back to the computer after {minutes} away. Say one short, warm "
    "sentence to welcome them back, in character and in the language you always speak "
    "with them; if it fits, refer to what you talked about. Only the sentence.)"
)
MAX_CHARS = 240
IdleReader = Callable[[], float]
"""Seconds since the user's last keyboard or mouse input (``app.adapters.user_idle``)."""
BACK_WITHIN_S = 2 * POLL_S
"""Input this recent, after being away, is the user coming back."""


def _minutes(seconds: float) -> str:
    minutes = seconds / 60
    return f"{round(minutes)} minutes" if minutes >= 2 else "a little while"


class CheckIns:
    def __init__(self, pipeline: VoicePipeline, settings: CheckInSettings,
                 now: Callable[[], float] = time.monotonic,
                 idle: IdleReader | None = None) -> None:
        """``idle``: seconds since the user's last input, where the system tells."""
        self.pipeline, self.settings, self._now = pipeline, settings, now
        self._idle = idle
        self._away_for: float | None = None
        """How long the user had been away, while they still are."""
        self._lock = threading.Lock()
        self._last_activity = now()
        self._last_check_in: float | None = None
        self._key: object = None
        """The conversation of the last committed turn: the one to check in on."""
        self._talked = False
        self._asking = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def use(self, settings: CheckInSettings) -> None:
        """Another persona (or its edited settings); the silence is counted afresh."""
        with self._lock:
            self.settings, self._last_activity = settings, self._now()
            self._key, self._talked = None, False

    def observe(self, event: PipelineEvent) -> None:
        if isinstance(event, SpeechStarted | PlaybackEnded | TurnCommitted):
            with self._lock:
                self._last_activity = self._now()
                if isinstance(event, TurnCommitted) and event.turn_id >= 0:
                    self._key, self._talked = event.conversation_key, True

    def due(self) -> bool:
        """Quiet long enough, the last check-in long enough ago, a conversation to go on."""
        after = self.settings.after_minutes
        if after is None or self._asking or not self._talked:
            return False
        if self._now() - self._last_activity < after * 60:
            return False
        return self._interval_passed()

    def _read_idle(self) -> float | None:
        if self._idle is None:
            return None
        try:
            return self._idle()
        except OSError:
            log.info("reading the time since the last input failed", exc_info=True)
            return None

    def _returned(self, idle_s: float | None) -> float | None:
        """How long the user was away, when this look finds them just back."""
        if idle_s is None:
            return None
        if idle_s >= self.settings.away_minutes * 60:
            self._away_for = idle_s
        elif self._away_for is not None and idle_s <= BACK_WITHIN_S:
            away, self._away_for = self._away_for, None
            return away
        return None

    def _interval_passed(self) -> bool:
        last = self._last_check_in
        return last is None or self._now() - last >= self.settings.every_minutes * 60

    def tick(self) -> bool:
        """Ask for a welcome back or a check-in if one is due; True when asked."""
        idle_s = self._read_idle()
        with self._lock:
            away = self._returned(idle_s)
            if away is not None and self.settings.welcome_back and not self._asking \
                    and self._interval_passed():
                instruction, key = WELCOME.format(minutes=_minutes(away)), self._key
            elif self.due() and not self._nobody_here(idle_s):
                after = self.settings.after_minutes or 0.0
                instruction, key = INSTRUCTION.format(minutes=_minutes(after * 60)), self._key
            else:
                return False
            self._asking, self._last_check_in = True, self._now()
        self.pipeline.extract(key, instruction, self._answered)
        return True

    def _nobody_here(self, idle_s: float | None) -> bool:
        """No input for the whole silence: the user is away from the computer."""
        return idle_s is not None and idle_s >= self._now() - self._last_activity

    def _answered(self, text: str | None) -> None:
        """On the LLM thread: the model's line, cleaned to what may be said, or nothing."""
        with self._lock:
            self._asking = False
        line = spoken_line(text or "")
        if line:
            self.pipeline.announce(line)
        else:
            log.info("check-in skipped: %s", "cancelled" if text is None else "nothing sayable")

    def start(self) -> None:
        def loop() -> None:
            while not self._stop.wait(POLL_S):
                try:
                    self.tick()
                except Exception:
                    log.exception("check-in failed")

        self._thread = threading.Thread(target=loop, name="check-ins", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)


def spoken_line(text: str) -> str:
    """The first sentence or two a listener would hear of ``text`` (markup, tags and
    out-of-character talk removed), capped."""
    gate = SentenceGate()
    chunks = [c for c in (*gate.push(text[:MAX_CHARS * 2]), *gate.flush())
              if not breaks_character(c)]
    line = ""
    for chunk in chunks:
        if line and len(line) + len(chunk) > MAX_CHARS:
            break
        line = f"{line} {chunk}".strip()
    return line[:MAX_CHARS]
