"""The window's saved conversations: resume per persona, New conversation, History,
Memories and Forget everything (the "Conversation" menu).

Kept out of window.py: the window calls ``show(persona)`` when a persona is shown and
``attach(pipeline)`` when engines are ready; everything else starts from the menu.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence

from app.core.memory_extraction import MemoryExtractor, extraction_enabled
from app.core.pipeline import VoicePipeline
from app.personas.model import Persona
from app.storage.extraction import fact_store
from app.storage.keeper import ConversationKey, Keeper, history_pairs
from app.ui.history_dialog import HistoryDialog
from app.ui.memory_dialog import MemoryDialog
from app.ui.plain import ask

if TYPE_CHECKING:
    from app.ui.window import MainWindow

log = logging.getLogger(__name__)


class Conversations:
    def __init__(self, window: MainWindow, keeper: Keeper) -> None:
        self.window = window
        self.keeper = keeper
        self.key: ConversationKey | None = None
        self._pairs: list[tuple[str, str]] = []
        self.history_dialog: HistoryDialog | None = None
        self.memory_dialog: MemoryDialog | None = None
        self.extractor: MemoryExtractor | None = None
        """The idle-time LLM pass noting facts about the user (None: off)."""
        self._build_menu()

    def _build_menu(self) -> None:
        w = self.window
        menu = w.menuBar().addMenu("&Conversation")
        self.new_action = QAction("&New conversation", w)
        self.new_action.setShortcut(QKeySequence("Ctrl+N"))
        self.new_action.triggered.connect(self.new_conversation)
        self.history_action = QAction("&History…", w)
        self.history_action.setShortcut(QKeySequence("Ctrl+H"))
        self.history_action.triggered.connect(self.open_history)
        self.memory_action = QAction("&Memories…", w)
        self.memory_action.triggered.connect(self.open_memories)
        self.forget_action = QAction("&Forget everything…", w)
        self.forget_action.triggered.connect(self.ask_forget_everything)
        menu.addActions([self.new_action, self.history_action, self.memory_action])
        menu.addSeparator()
        menu.addAction(self.forget_action)
        w.addActions([self.new_action, self.history_action])

    # ---- showing a conversation ----------------------------------------------------------

    def show(self, persona: Persona) -> None:
        """Show the persona's current conversation and load it into the pipeline."""
        self.keeper.flush()  # its last exchange may still be on the writer's queue
        key, exchanges = self.keeper.resume(persona.id)
        self._display(persona, key, [(e.user_text, e.heard_text, e.interrupted)
                                     for e in exchanges])
        self._pairs = history_pairs(exchanges)
        self._load()

    def attach(self, pipeline: VoicePipeline) -> None:
        """Engines are ready (at launch or after a settings restart): the shown
        conversation, with every exchange saved so far, becomes the pipeline's."""
        self.keeper.flush()
        key, exchanges = self.keeper.resume(self.window.persona.id)
        self.key, self._pairs = key, history_pairs(exchanges)
        log.info("conversation %s resumed: %d exchange(s) back in the LLM context",
                 key.conversation_id, len(self._pairs))
        self._load(pipeline)
        self._start_extraction(pipeline)

    def stop_extraction(self) -> None:
        """End the note-taking thread of the pipeline that is going (replaced or detached)."""
        if self.extractor is not None:
            self.extractor.stop()
            self.extractor = None

    def _start_extraction(self, pipeline: VoicePipeline) -> None:
        self.stop_extraction()  # it belonged to the pipeline this one replaces
        setting = getattr(self.window.settings, "memory_extraction", None)
        if not extraction_enabled(setting, pipeline.engines.llm):
            log.info("memory extraction is off (setting %s)", setting)
            return
        self.extractor = MemoryExtractor(pipeline, fact_store(self.keeper))
        pipeline.add_observer(self.extractor.observe)


    def _display(self, persona: Persona, key: ConversationKey,
                 shown: list[tuple[str, str, bool]]) -> None:
        self.key = key
        self.window.transcript.reset(persona.greeting, persona.avatar.accent)
        self.window.transcript.show_restored(shown)

    def _load(self, pipeline: VoicePipeline | None = None) -> None:
        pipeline = pipeline or self.window.pipeline
        if pipeline is not None:
            persona = self.window.persona
            pipeline.load_conversation(persona.full_system_prompt(), self._pairs, self.key)
            self.window.readiness.expect(pipeline, persona.name)  # its history warms now

    # ---- menu actions ----------------------------------------------------------------------

    def new_conversation(self) -> None:
        persona = self.window.persona
        key = self.keeper.new_conversation(persona.id)
        self._display(persona, key, [])
        self._pairs = []
        self._load()

    def reopen(self, conversation_id: str) -> None:
        """Continue a past conversation; another persona's switches to that persona."""
        info = self.keeper.history.conversation(conversation_id)
        persona = self._persona(info.persona_id) if info is not None else None
        if persona is None:
            return  # gone, or a deleted persona's: it can be read, not continued
        self.keeper.reopen(persona.id, conversation_id)
        if persona.id == self.window.persona.id:
            self.show(persona)
        else:
            self.window.sidebar.select(persona.id)  # the switch shows its current one

    def delete(self, conversation_id: str) -> None:
        info = self.keeper.history.conversation(conversation_id)
        persona_id = info.persona_id if info is not None else self.window.persona.id
        current = self.key is not None and self.key.conversation_id == conversation_id
        self.keeper.delete_conversation(persona_id, conversation_id)
        if current:
            self.show(self.window.persona)

    def _persona(self, persona_id: str) -> Persona | None:
        return next((p for p in self.window.library.personas if p.id == persona_id), None)

    def open_history(self) -> HistoryDialog:
        self.keeper.flush()  # the last exchange may still be on its way to the disk
        names = {p.id: p.name for p in self.window.library.personas}
        dialog = HistoryDialog(self.keeper.history, names,
                               self.key.conversation_id if self.key else None, self.window)
        dialog.reopen_requested.connect(self.reopen)
        dialog.deleted.connect(self.delete)
        self.history_dialog = dialog
        dialog.show()
        return dialog

    def open_memories(self) -> MemoryDialog:
        persona = self.window.persona
        self.keeper.flush()
        dialog = MemoryDialog(self.keeper.memories, persona.id, persona.name, self.window)
        self.memory_dialog = dialog
        dialog.show()
        return dialog

    def ask_forget_everything(self) -> None:
        name = self.window.persona.name
        if ask(self.window, "Forget everything",
               f"Delete every conversation with {name} and everything {name} remembers about "
               "you? This cannot be undone."):
            self.forget_everything()

    def forget_everything(self) -> None:
        persona = self.window.persona
        self.keeper.forget_everything(persona.id)
        log.info("forgot every conversation and memory of persona %s", persona.id)
        self.show(persona)
        if self.memory_dialog is not None:
            self.memory_dialog.reload()
        if self.history_dialog is not None:
            self.history_dialog.reload()
