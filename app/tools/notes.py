"""The ``add_note`` and ``search_notes`` tools: "note that the wifi password is on the
fridge", "what did I note about wifi?"."""

from __future__ import annotations

import threading

from app.tools import phrases
from app.tools.clock import Now, local_now
from app.tools.records import NoteBook
from app.tools.spec import Arguments, ToolResult, ToolSpec

MAX_NOTE_CHARS = 500


class AddNote:
    spec = ToolSpec(
        name="add_note",
        description="Keep a note the user dictates, to find it again later.",
        parameters={"type": "object", "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": MAX_NOTE_CHARS,
                     "description": "The note, in the user's words."}},
            "required": ["text"], "additionalProperties": False},
        side_effects=True,
    )

    def __init__(self, notes: NoteBook, now: Now = local_now) -> None:
        self.notes, self.now = notes, now

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        text = " ".join(str(arguments["text"]).split())
        if not text:
            return ToolResult.failure("add_note: the note is empty.")
        note = self.notes.add(text, created_at=self.now().timestamp())
        if self.notes.unsaved:
            return ToolResult(f"Note kept for this session only (the disk refused it): "
                              f"{note.text}", phrases.joined(phrases.noted(language),
                                                             phrases.not_saved(language),
                                                             language))
        return ToolResult(f"Note {note.id} kept: {note.text}", phrases.noted(language))


class SearchNotes:
    spec = ToolSpec(
        name="search_notes",
        description="Find the user's notes about something.",
        parameters={"type": "object", "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 200,
                      "description": "What the note is about, in a few words."}},
            "required": ["query"], "additionalProperties": False},
        side_effects=False,
    )

    def __init__(self, notes: NoteBook) -> None:
        self.notes = notes

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        found = [n.text for n in self.notes.search(str(arguments["query"]))]
        text = "; ".join(found) if found else "No note matches."
        return ToolResult(text, phrases.found_notes(found, language))
