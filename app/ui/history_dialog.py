"""The History dialog: every persona's past conversations (a deleted persona's too), with
their dates, a persona filter and a search over what was said, to read, continue, export
or delete.

Reads are small indexed queries on the GUI thread; deleting asks first. The dialog only
reports ``reopen_requested`` / ``deleted``; the window decides what the pipeline does
(continuing another persona's conversation switches to that persona). A deleted
persona's conversations can be read, exported and deleted, not continued.
"""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.storage.history import ConversationInfo, HistoryStore, export_json, export_markdown
from app.ui import keyboard, theme
from app.ui.plain import ask, plain

log = logging.getLogger(__name__)

Confirm = Callable[[str], bool]


def when(stamp: float) -> str:
    return time.strftime("%a %d %b %Y, %H:%M", time.localtime(stamp))


def when_short(stamp: float) -> str:
    """'Tue 01 Dec, 00:04', with the year only when it is not this year's."""
    moment = time.localtime(stamp)
    year = "" if moment.tm_year == time.localtime().tm_year else " %Y"
    return time.strftime(f"%a %d %b{year}, %H:%M", moment)


def _ask(parent: QWidget) -> Confirm:
    def confirm(question: str) -> bool:
        return ask(parent, "Hanasu", question)

    return confirm


class HistoryDialog(QDialog):
    reopen_requested = Signal(str)  # conversation id
    deleted = Signal(str)  # conversation id

    def __init__(self, history: HistoryStore, persona_names: Mapping[str, str],
                 current_id: str | None, parent: QWidget | None = None) -> None:
        """``persona_names``: id -> name of the personas that exist now (the others'
        conversations are listed as a deleted persona's); ``current_id``: the
        conversation open in the window."""
        super().__init__(parent)
        self.setWindowTitle("History")
        self.resize(900, 580)
        self.history = history
        self.persona_names = dict(persona_names)
        self.current_id = current_id
        self.confirm: Confirm = _ask(self)
        """Asks before deleting; tests replace it."""
        self._conversations: list[ConversationInfo] = []

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        filters = QHBoxLayout()
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search what was said")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search conversations")
        self.search.textChanged.connect(self.reload)
        filters.addWidget(self.search, 3)
        self.persona_filter = QComboBox()
        self.persona_filter.setAccessibleName("Persona")
        self.persona_filter.addItem("All personas", None)
        for persona_id, name in sorted(self.persona_names.items(), key=lambda p: p[1].lower()):
            self.persona_filter.addItem(name, persona_id)
        self.persona_filter.currentIndexChanged.connect(self.reload)
        filters.addWidget(self.persona_filter, 1)
        layout.addLayout(filters)
        body = QHBoxLayout()
        self.list = QListWidget()
        self.list.setAccessibleName("Conversations")
        self.list.setMinimumWidth(330)
        self.list.setWordWrap(True)
        self.list.setSpacing(2)
        self.list.setStyleSheet(f"QListWidget::item:selected {{ color: {theme.TEXT}; }}")
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentRowChanged.connect(self._show)
        body.addWidget(self.list, 2)
        self.preview = QTextBrowser()
        self.preview.setAccessibleName("Conversation text")
        self.preview.setOpenLinks(False)
        body.addWidget(self.preview, 3)
        layout.addLayout(body, 1)
        self.empty = QLabel()
        self.empty.setObjectName("subtitle")
        layout.addWidget(self.empty)
        self.status = plain(QLabel())  # a file name is not markup
        self.status.setObjectName("subtitle")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)

        buttons = QHBoxLayout()
        self.open_button = QPushButton("Continue this conversation")
        self.open_button.setObjectName("primary")
        self.open_button.setStyleSheet(  # the theme's primary colour would hide "disabled"
            f"QPushButton:disabled {{ background: {theme.CARD_HI}; color: {theme.MUTED_TEXT};"
            f" border-color: {theme.BORDER}; }}")
        self.open_button.clicked.connect(self._reopen)
        self.markdown_button = QPushButton("Export Markdown…")
        self.markdown_button.clicked.connect(lambda: self._export("md"))
        self.json_button = QPushButton("Export JSON…")
        self.json_button.clicked.connect(lambda: self._export("json"))
        self.delete_button = QPushButton("Delete…")
        self.delete_button.clicked.connect(self._delete)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        for button in (self.open_button, self.markdown_button, self.json_button,
                       self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        self.reload()
        keyboard.prepare(self)

    # ---- contents ------------------------------------------------------------------------

    def persona_name(self, persona_id: str) -> str:
        return self.persona_names.get(persona_id, f"{persona_id} (deleted persona)")

    def show_persona(self, persona_id: str | None) -> None:
        """Filter by a persona (None: all)."""
        self.persona_filter.setCurrentIndex(max(0, self.persona_filter.findData(persona_id)))

    def reload(self) -> None:
        search = self.search.text()
        persona_id = self.persona_filter.currentData()
        self._conversations = [c for c in self.history.conversations(persona_id, search)
                               if c.exchange_count]
        self.list.clear()
        for info in self._conversations:
            current = "  ·  open now" if info.id == self.current_id else ""
            count = f"{info.exchange_count} exchange{'s' if info.exchange_count != 1 else ''}"
            preview = info.preview if len(info.preview) <= 60 else info.preview[:57] + "…"
            stamp = when_short(info.updated_at)
            name = self.persona_name(info.persona_id)
            item = QListWidgetItem(f"{stamp}  ·  {name}\n“{preview}”\n{count}{current}")
            item.setData(Qt.ItemDataRole.UserRole, info.id)
            self.list.addItem(item)
        has_any = bool(self._conversations)
        filtered = bool(search.strip()) or persona_id is not None
        self.empty.setText("No conversation matches." if filtered
                           else "No saved conversations yet: just start talking.")
        self.empty.setVisible(not has_any)
        for button in (self.open_button, self.markdown_button, self.json_button,
                       self.delete_button):
            button.setEnabled(has_any)
        if has_any:
            self.list.setCurrentRow(0)
            self._show(0)
        else:
            self.preview.clear()

    @property
    def selected(self) -> ConversationInfo | None:
        row = self.list.currentRow()
        return self._conversations[row] if 0 <= row < len(self._conversations) else None

    def select(self, conversation_id: str) -> None:
        for row, info in enumerate(self._conversations):
            if info.id == conversation_id:
                self.list.setCurrentRow(row)

    def _show(self, row: int) -> None:
        info = self.selected
        if info is None:
            self.preview.clear()
            return
        started = when(info.started_at)
        name = html.escape(self.persona_name(info.persona_id))
        parts = [f"<p style='color:{theme.MUTED_TEXT}'>With {name}, started {started}</p>"]
        for exchange in self.history.exchanges(info.id):
            parts.append(f"<p><b>You:</b> {html.escape(exchange.user_text)}</p>")
            note = (f" <span style='color:{theme.MUTED_TEXT}'>(interrupted)</span>"
                    if exchange.interrupted else "")
            parts.append(f"<p><b>{name}:</b> "
                         f"{html.escape(exchange.heard_text)}{note}</p>")
        self.preview.setHtml("".join(parts))
        is_open = info.id == self.current_id
        gone = info.persona_id not in self.persona_names
        self.open_button.setEnabled(not (is_open or gone))
        self.open_button.setText("Open now" if is_open else "Persona deleted" if gone
                                 else "Continue this conversation")

    # ---- actions -------------------------------------------------------------------------

    def _reopen(self) -> None:
        info = self.selected
        if info is not None:
            self.current_id = info.id
            self.reopen_requested.emit(info.id)
            self.reload()

    def _delete(self) -> None:
        info = self.selected
        if info is None:
            return
        name = self.persona_name(info.persona_id)
        if not self.confirm(f"Delete this conversation with {name} "
                            f"({info.exchange_count} exchanges, {when(info.updated_at)})? "
                            "This cannot be undone."):
            return
        self.deleted.emit(info.id)
        self.reload()

    def _export(self, kind: str) -> None:
        info = self.selected
        if info is None:
            return
        stamp = time.strftime("%Y-%m-%d", time.localtime(info.started_at))
        suggested = str(Path.home() / f"{self.persona_name(info.persona_id)}-{stamp}.{kind}")
        wanted = "Markdown (*.md)" if kind == "md" else "JSON (*.json)"
        path, _ = QFileDialog.getSaveFileName(self, "Export conversation", suggested, wanted)
        if path:
            self.export_to(Path(path), kind)

    def export_to(self, path: Path, kind: str) -> bool:
        """Write the selected conversation; a failure is one line in a message box."""
        info = self.selected
        if info is None:
            return False
        exchanges = self.history.exchanges(info.id)
        render = export_markdown if kind == "md" else export_json
        try:
            path.write_text(render(info, exchanges, self.persona_name(info.persona_id)),
                            encoding="utf-8")
        except OSError as exc:
            log.warning("export failed: %s", exc)
            self.status.setText(f"Could not export to {path}: {exc.strerror or exc}")
            return False
        self.status.setText(f"Exported to {path}")
        return True
