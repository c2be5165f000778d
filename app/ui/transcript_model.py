"""What the transcript shows, per turn, kept apart from the widgets so it is easy to test.

The reply is shown as it is *heard*: chunk durations (from SpeechAudio) and the playback
clock (from PlaybackLevel) say how far the speaker got, so words appear in step with the
voice. When playback ends, PlaybackEnded.heard_text is authoritative; after a barge-in the
rest of the reply (known from the token stream) is kept, greyed out, as "unheard".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.emotion import strip_tags
from app.core.playback import heard_part


@dataclass
class TurnEntry:
    turn_id: int
    user: str = ""
    confirmed: bool = False
    tokens: list[str] = field(default_factory=list)
    chunks: dict[int, tuple[str, float]] = field(default_factory=dict)
    """index -> (text, seconds of audio)."""
    started_at: float | None = None
    played_s: float = 0.0
    ended: bool = False
    interrupted: bool = False
    heard: str | None = None

    @property
    def full_reply(self) -> str:
        text = strip_tags("".join(self.tokens)).strip()
        if text:
            return text
        return " ".join(t for _, (t, _) in sorted(self.chunks.items()))

    @property
    def speaking(self) -> bool:
        return self.started_at is not None and not self.ended

    def spoken(self) -> str:
        """The part of the reply the user has heard so far."""
        if self.heard is not None:
            return self.heard
        if self.started_at is None:
            return ""
        words: list[str] = []
        offset = 0.0
        for _, (text, seconds) in sorted(self.chunks.items()):
            if self.played_s >= offset + seconds:
                words.append(text)
            elif self.played_s > offset and seconds > 0:
                words.append(heard_part(text, (self.played_s - offset) / seconds))
                break
            else:
                break
            offset += seconds
        return " ".join(w for w in words if w)

    def current_sentence(self) -> str:
        """The chunk of the reply being played now (the desktop pet's bubble): whole, as
        the voice says it; the last one known while the next is still being made."""
        if not self.speaking or not self.chunks:
            return ""
        offset = 0.0
        chunks = [chunk for _, chunk in sorted(self.chunks.items())]
        for text, seconds in chunks:
            offset += seconds
            if self.played_s < offset:
                return text
        return chunks[-1][0]

    def unheard(self) -> str:
        """After an interruption: the words of the reply that were never played."""
        if not (self.ended and self.interrupted):
            return ""
        heard_words = len((self.heard or "").split())
        return " ".join(self.full_reply.split()[heard_words:])


class TranscriptModel:
    """Folds the bridge's signals into per-turn entries; the view re-renders changed turns."""

    def __init__(self) -> None:
        self.turns: dict[int, TurnEntry] = {}

    def clear(self) -> None:
        self.turns.clear()

    def _entry(self, turn_id: int) -> TurnEntry:
        if turn_id not in self.turns:
            self.turns[turn_id] = TurnEntry(turn_id)
        return self.turns[turn_id]

    def visible(self) -> list[TurnEntry]:
        """Turns the user should see: confirmed ones (speculative work stays hidden)."""
        return [t for _, t in sorted(self.turns.items()) if t.confirmed]

    def confirmed(self, turn_id: int) -> TurnEntry:
        entry = self._entry(turn_id)
        entry.confirmed = True
        return entry

    def cancelled(self, turn_id: int) -> None:
        """Drop a speculative turn the user talked over (it was never shown)."""
        entry = self.turns.get(turn_id)
        if entry is not None and not entry.confirmed:
            del self.turns[turn_id]

    def transcript(self, turn_id: int, text: str) -> TurnEntry:
        entry = self._entry(turn_id)
        entry.user = text.strip()
        return entry

    def token(self, turn_id: int, text: str) -> TurnEntry:
        entry = self._entry(turn_id)
        entry.tokens.append(text)
        return entry

    def chunk_audio(self, turn_id: int, index: int, text: str, seconds: float) -> TurnEntry:
        entry = self._entry(turn_id)
        entry.chunks[index] = (text, seconds)
        return entry

    def playback_started(self, turn_id: int, at: float) -> TurnEntry:
        entry = self._entry(turn_id)
        entry.started_at = at
        entry.played_s = 0.0
        return entry

    def playback_position(self, at: float) -> TurnEntry | None:
        """Advance the speaking turn to playback clock ``at``; returns it if it changed."""
        for entry in self.turns.values():
            if entry.speaking and entry.started_at is not None:
                entry.played_s = max(entry.played_s, at - entry.started_at)
                return entry
        return None

    def current_sentence(self) -> str:
        """What the voice is saying now; empty while no reply plays."""
        for entry in self.turns.values():
            if entry.speaking:
                return entry.current_sentence()
        return ""

    def playback_ended(self, turn_id: int, heard: str, interrupted: bool) -> TurnEntry:
        entry = self._entry(turn_id)
        entry.ended = True
        entry.heard = heard.strip()
        entry.interrupted = interrupted
        if entry.started_at is None:
            entry.started_at = 0.0
        return entry
