"""Per-persona memories: short facts the user told a persona, searchable with SQLite FTS5.

Search ranks a persona's facts by BM25 against the user's words (Porter-stemmed, so
"learning" finds "learn"); where this SQLite has no FTS5 the same API falls back to
counting shared words with LIKE. Both stay on this machine.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from app.storage.database import has_fts
from app.storage.history import Database

MAX_MEMORY_CHARS = 500
"""A memory is a sentence; longer text is cut so one fact cannot crowd the prompt."""

_WORD = re.compile(r"\w+", re.UNICODE)
_STOPWORDS_TEXT = (
    "a an and are as at be but by can did do does for from had has have he her him his how i "
    "if in is it its me my of on or our she so that the their them then there they this to "
    "us was we were what when where which who why will with you your yours i'm im about "
    "just like really very please tell know think"
)
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


@dataclass(frozen=True)
class Memory:
    id: int
    persona_id: str
    text: str
    created_at: float
    updated_at: float


def fts_match(words: list[str]) -> str:
    """An FTS5 query matching any of ``words``, each quoted (no operator gets through)."""
    return " OR ".join('"' + w.replace('"', "") + '"' for w in words)


def keywords(text: str) -> list[str]:
    """The words of ``text`` worth searching for (lower case, no stopwords, in order)."""
    seen: list[str] = []
    for word in _WORD.findall(text.lower()):
        if len(word) > 1 and word not in STOPWORDS and word not in seen:
            seen.append(word)
    return seen


def _overlap(wanted: list[str], have: list[str]) -> int:
    """Words of ``wanted`` found in ``have`` (or sharing their first five letters)."""
    return sum(1 for w in wanted if any(w == h or (len(w) > 4 and w[:5] == h[:5])
                                        for h in have))


def clean_fact(text: str) -> str:
    fact = " ".join(text.split()).strip(" .!?,;:")
    return fact[:MAX_MEMORY_CHARS]


class MemoryStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        with db.read() as conn:
            self.full_text = has_fts(conn)

    # ---- writes ------------------------------------------------------------------------

    def add(self, persona_id: str, text: str) -> Memory | None:
        """Store a fact (the same fact again only refreshes its time); None if empty."""
        fact = clean_fact(text)
        if not fact:
            return None
        now = time.time()
        with self.db.write() as db:
            row = db.execute(
                "SELECT id, created_at FROM memories WHERE persona_id = ? AND lower(text) = ?",
                (persona_id, fact.lower()),
            ).fetchone()
            if row is not None:
                db.execute("UPDATE memories SET updated_at = ? WHERE id = ?", (now, row[0]))
                return Memory(int(row[0]), persona_id, fact, float(row[1]), now)
            cursor = db.execute(
                "INSERT INTO memories(persona_id, text, created_at, updated_at)"
                " VALUES (?, ?, ?, ?)", (persona_id, fact, now, now),
            )
            return Memory(int(cursor.lastrowid or 0), persona_id, fact, now, now)

    def add_new(self, persona_id: str, text: str) -> Memory | None:
        """Store a fact unless the persona already remembers it in other words (the
        extraction pass repeats what is known); the new memory, or None."""
        wanted = keywords(text)
        if not wanted:
            return None
        for known in self.search(persona_id, text, limit=3):
            have = keywords(known.text)
            if _overlap(wanted, have) * 5 >= len(wanted) * 4 or (
                    have and _overlap(have, wanted) * 5 >= len(have) * 4):
                return None
        return self.add(persona_id, text)

    def update(self, memory_id: int, text: str) -> None:
        fact = clean_fact(text)
        if not fact:
            self.delete(memory_id)
            return
        with self.db.write() as db:
            db.execute("UPDATE memories SET text = ?, updated_at = ? WHERE id = ?",
                       (fact, time.time(), memory_id))

    def delete(self, memory_id: int) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))

    def clear(self, persona_id: str) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM memories WHERE persona_id = ?", (persona_id,))

    def forget(self, persona_id: str, text: str) -> Memory | None:
        """Delete the memory that best matches ``text``; the deleted one, or None.

        The best match must share at least half of the request's words: "forget that my
        sister is called Mei" must not delete "my brother is called Ken" for one word."""
        wanted = keywords(text)
        for candidate in self.search(persona_id, text, limit=3):
            if _overlap(wanted, keywords(candidate.text)) * 2 >= len(wanted):
                self.delete(candidate.id)
                return candidate
        return None

    # ---- reads -------------------------------------------------------------------------

    def all(self, persona_id: str) -> list[Memory]:
        """Most recent first."""
        return self._select("WHERE persona_id = ? ORDER BY updated_at DESC, id DESC",
                            (persona_id,))

    def recent(self, persona_id: str, limit: int) -> list[Memory]:
        return self._select("WHERE persona_id = ? ORDER BY updated_at DESC, id DESC LIMIT ?",
                            (persona_id, limit))

    def search(self, persona_id: str, query: str, limit: int = 5) -> list[Memory]:
        """The persona's memories most relevant to ``query``, best first."""
        words = keywords(query)
        if not words:
            return []
        if self.full_text:
            match = fts_match(words)
            with self.db.read() as db:
                rows = db.execute(
                    "SELECT m.id, m.persona_id, m.text, m.created_at, m.updated_at"
                    " FROM memories_fts f JOIN memories m ON m.id = f.rowid"
                    " WHERE memories_fts MATCH ? AND m.persona_id = ?"
                    " ORDER BY bm25(memories_fts) LIMIT ?", (match, persona_id, limit),
                ).fetchall()
            return [Memory(int(i), str(p), str(t), float(c), float(u)) for i, p, t, c, u in rows]
        return self._like_search(persona_id, words, limit)

    def _like_search(self, persona_id: str, words: list[str], limit: int) -> list[Memory]:
        """Without FTS5: rank by how many query words (or their first 5 letters) occur."""
        scored: list[tuple[int, Memory]] = []
        for memory in self.all(persona_id):
            text = memory.text.lower()
            score = sum(1 for w in words if w in text or (len(w) > 5 and w[:5] in text))
            if score:
                scored.append((score, memory))
        scored.sort(key=lambda pair: (-pair[0], -pair[1].updated_at))
        return [m for _, m in scored[:limit]]

    def _select(self, where: str, args: tuple[object, ...]) -> list[Memory]:
        with self.db.read() as db:
            rows = db.execute(
                f"SELECT id, persona_id, text, created_at, updated_at FROM memories {where}",
                args,
            ).fetchall()
        return [Memory(int(i), str(p), str(t), float(c), float(u)) for i, p, t, c, u in rows]
