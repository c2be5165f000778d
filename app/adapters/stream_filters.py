"""The text a language model's raw stream becomes before anyone hears it.

Both adapters pass every piece through one ``ReplyFilter``: it ends the reply at the first
stop string (an end-of-turn marker written as text), drops Gemma 4 thought blocks, and
strips the reply's leading whitespace. Markers may arrive split across any number of
pieces; only text that could still start one is held back, so ordinary pieces pass
through one token at a time.
"""

from __future__ import annotations

from collections.abc import Iterable


def partial_suffix(text: str, marker: str) -> int:
    """Length of the longest end of ``text`` that could be the start of ``marker``."""
    for k in range(min(len(marker) - 1, len(text)), 0, -1):
        if text.endswith(marker[:k]):
            return k
    return 0


class StopFilter:
    """Passes text up to the first stop string; holds back what might begin one."""

    def __init__(self, stops: Iterable[str]) -> None:
        self._stops = [s for s in stops if s]
        self._pending = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        if self.stopped:
            return ""
        self._pending += text
        for stop in self._stops:
            at = self._pending.find(stop)
            if at >= 0:
                self.stopped = True
                out, self._pending = self._pending[:at], ""
                return out
        keep = max((partial_suffix(self._pending, stop) for stop in self._stops), default=0)
        cut = len(self._pending) - keep
        out, self._pending = self._pending[:cut], self._pending[cut:]
        return out

    def flush(self) -> str:
        out, self._pending = self._pending, ""
        return out


class ThoughtFilter:
    """Drops a Gemma 4 thought block (``<|channel>...<channel|>``) should the model write
    one although thinking is off: its markers are plain text to the tokenizer, and a
    reasoning trace must never be spoken."""

    OPEN, CLOSE = "<|channel>", "<channel|>"

    def __init__(self) -> None:
        self._pending = ""
        self._inside = False

    def feed(self, text: str) -> str:
        self._pending += text
        out: list[str] = []
        while True:
            marker = self.CLOSE if self._inside else self.OPEN
            at = self._pending.find(marker)
            if at < 0:
                break
            if not self._inside:
                out.append(self._pending[:at])
            self._pending = self._pending[at + len(marker) :]
            self._inside = not self._inside
        keep = partial_suffix(self._pending, self.CLOSE if self._inside else self.OPEN)
        if not self._inside:
            out.append(self._pending[: len(self._pending) - keep])
        self._pending = self._pending[len(self._pending) - keep :] if keep else ""
        return "".join(out)

    def flush(self) -> str:
        out = "" if self._inside else self._pending
        self._pending = ""
        return out


class ReplyFilter:
    """Stop strings, then thought blocks, then leading whitespace: one reply's filter."""

    def __init__(self, stops: Iterable[str]) -> None:
        self._stop = StopFilter(stops)
        self._thought = ThoughtFilter()
        self._began = False

    @property
    def stopped(self) -> bool:
        """A stop string came: nothing more is spoken (``finish`` still flushes)."""
        return self._stop.stopped

    def feed(self, text: str) -> str:
        """The speakable text of this piece so far ("" while it may be a marker's start)."""
        return self._lead(self._thought.feed(self._stop.feed(text)))

    def finish(self, text: str = "") -> str:
        """The last of the reply: ``text`` (a decoder's final bytes) and whatever was held
        back for a marker that never came."""
        tail = self._stop.feed(text)
        tail += "" if self._stop.stopped else self._stop.flush()
        return self._lead(self._thought.feed(tail) + self._thought.flush())

    def _lead(self, piece: str) -> str:
        if not self._began:
            piece = piece.lstrip()
            self._began = bool(piece)
        return piece
