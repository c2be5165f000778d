"""A persona's memory page: every fact it keeps about the user, to add, edit or delete.

Double-click (or F2) a memory to edit it in place; an edit emptied out deletes it. What
is listed here is exactly what can be put in front of the user's words before a reply.
A change the database refuses (read-only, locked, a full disk) is said under the list,
each time, and the list goes back to what is kept.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.storage.faults import reason
from app.storage.history import SaveFailed
from app.storage.memory import MAX_MEMORY_CHARS, MemoryStore
from app.ui import keyboard, theme
from app.ui.plain import plain

ID_ROLE = Qt.ItemDataRole.UserRole


class MemoryDialog(QDialog):
    def __init__(self, memories: MemoryStore, persona_id: str, persona_name: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Memories — {persona_name}")
        self.resize(640, 520)
        self.memories = memories
        self.persona_id = persona_id
        self._loading = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.addWidget(QLabel(f"<b>What {html.escape(persona_name)} remembers about you</b>"))
        hint = QLabel("Say “remember that …” or “forget that …” in a conversation, or edit "
                      "here. Double-click a memory to change it. Nothing leaves this computer.")
        hint.setObjectName("subtitle")
        hint.setWordWrap(True)
        layout.addWidget(hint)
        self.list = QListWidget()
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.setWordWrap(True)
        self.list.setSpacing(3)
        self.list.setStyleSheet(f"QListWidget::item:selected {{ color: {theme.TEXT}; }}")
        self.list.itemChanged.connect(self._edited)
        layout.addWidget(self.list, 1)
        self.empty = QLabel(f"{html.escape(persona_name)} does not remember anything yet.")
        self.empty.setObjectName("subtitle")
        layout.addWidget(self.empty)
        self.status = plain(QLabel())
        self.status.setObjectName("subtitle")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)

        add_row = QHBoxLayout()
        self.new_text = QLineEdit()
        self.new_text.setPlaceholderText("Add a memory, e.g. “My sister is called Mei”")
        self.new_text.setMaxLength(MAX_MEMORY_CHARS)
        self.new_text.returnPressed.connect(self._add)
        add_row.addWidget(self.new_text, 1)
        self.add_button = QPushButton("Add")
        self.add_button.clicked.connect(self._add)
        add_row.addWidget(self.add_button)
        layout.addLayout(add_row)

        buttons = QHBoxLayout()
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(self.delete_selected)
        buttons.addWidget(self.delete_button)
        buttons.addStretch(1)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        self.reload()
        keyboard.prepare(self)

    def reload(self) -> None:
        self._loading = True
        self.list.clear()
        for memory in self.memories.all(self.persona_id):
            item = QListWidgetItem(memory.text)
            item.setData(ID_ROLE, memory.id)
            item.setToolTip(time.strftime("Remembered %d %b %Y, %H:%M",
                                          time.localtime(memory.updated_at)))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
        self._loading = False
        has_any = self.list.count() > 0
        self.empty.setVisible(not has_any)
        self.delete_button.setEnabled(has_any)
        if has_any:
            self.list.setCurrentRow(0)

    def texts(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _add(self) -> None:
        text = self.new_text.text().strip()
        if text and self._saved("The memory was not saved",
                                lambda: self.memories.add(self.persona_id, text)):
            self.new_text.clear()
        self.reload()

    def _edited(self, item: QListWidgetItem) -> None:
        if self._loading:
            return
        memory_id = item.data(ID_ROLE)
        if isinstance(memory_id, int):
            self._saved("The change was not saved",
                        lambda: self.memories.update(memory_id, item.text()))
            self.reload()

    def delete_selected(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        memory_id = item.data(ID_ROLE)
        if isinstance(memory_id, int):
            self._saved("The memory was not deleted", lambda: self.memories.delete(memory_id))
            self.reload()

    def _saved(self, what: str, write: Callable[[], object]) -> bool:
        """Run ``write``; False, with why under the list, when the database refused it."""
        try:
            write()
        except SaveFailed as exc:
            why = reason(exc.__cause__ or exc, self.memories.db.path)
            self.status.setText(f"{what}: {why}.")
            return False
        self.status.clear()
        return True
