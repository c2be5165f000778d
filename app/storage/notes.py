"""The user's notes ("note that the wifi password is on the fridge"), searched the way
memories are: BM25 over FTS5 where this SQLite has it, shared words with LIKE where not.

Notes belong to the user, not to a persona: every persona finds them. Japanese and
Chinese are written without spaces, so FTS5 sees a whole phrase as one word: when it finds
nothing, shared two-character pieces decide.
"""

from __future__ import annotations

import re
import sqlite3

from app.storage.database import has_fts
from app.storage.history import Database, SaveFailed
from app.storage.memory import clean_fact, fts_match, keywords
from app.tools.records import Note


class NoteStore:
    """``app.tools.records.NoteBook`` over the ``notes`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db
        with db.read() as conn:
            self.full_text = has_fts(conn, "notes")
        self._memory: list[Note] = []
        """Notes the disk refused: found by ``search``, written with the next one it takes."""

    @property
    def unsaved(self) -> bool:
        return bool(self._memory)

    def add(self, text: str, *, created_at: float) -> Note:
        """Keep a note. When the disk refuses it (the database told the user why), it is
        kept in memory, with a negative id, and written with the next note."""
        note = Note(0, clean_fact(text), created_at)
        try:
            with self.db.write() as db:
                for old in self._memory:
                    self._insert(db, old)
                note = Note(self._insert(db, note), note.text, created_at)
        except SaveFailed:
            note = Note(-len(self._memory) - 1, note.text, created_at)
            self._memory.append(note)
            return note
        self._memory.clear()
        return note

    @staticmethod
    def _insert(db: sqlite3.Connection, note: Note) -> int:
        cursor = db.execute("INSERT INTO notes(text, created_at) VALUES (?, ?)",
                            (note.text, note.created_at))
        return int(cursor.lastrowid or 0)

    def delete(self, note_id: int) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM notes WHERE id = ?", (note_id,))

    def all(self) -> list[Note]:
        """Newest first."""
        with self.db.read() as db:
            rows = db.execute("SELECT id, text, created_at FROM notes"
                              " ORDER BY created_at DESC, id DESC").fetchall()
        return self._memory[::-1] + [Note(int(i), str(t), float(c)) for i, t, c in rows]

    def search(self, query: str, limit: int = 3) -> list[Note]:
        words = keywords(query)
        if not words:
            return []
        if self.full_text:
            match = fts_match(words)
            with self.db.read() as db:
                rows = db.execute(
                    "SELECT n.id, n.text, n.created_at FROM notes_fts f"
                    " JOIN notes n ON n.id = f.rowid WHERE notes_fts MATCH ?"
                    " ORDER BY bm25(notes_fts), n.created_at DESC LIMIT ?", (match, limit),
                ).fetchall()
            if rows and not self._memory:
                return [Note(int(i), str(t), float(c)) for i, t, c in rows]
        scored: list[tuple[int, Note]] = []
        for note in self.all():
            score = _score(words, note.text.lower())
            if score:
                scored.append((score, note))
        scored.sort(key=lambda pair: (-pair[0], -pair[1].created_at))
        return [n for _, n in scored[:limit]]


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_CJK_STOP = frozenset(("什么", "我的", "的是", "是什", "在哪", "哪里", "につ", "つい", "いて",
                       "のこ", "こと", "何を", "した", "メモ"))


def _score(words: list[str], text: str) -> int:
    """Query words found in ``text`` (their first five letters will do), and for CJK
    words their two-character pieces."""
    score = 0
    for word in words:
        if _CJK.search(word):
            pairs = {word[i:i + 2] for i in range(len(word) - 1)} - _CJK_STOP
            score += sum(1 for pair in pairs if pair in text)
        elif word in text or (len(word) > 5 and word[:5] in text):
            score += 1
    return score
