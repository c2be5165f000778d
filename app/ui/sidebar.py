"""The persona list: a face (or picture) thumbnail, the name and a one-line description per
persona, with the persona actions: New, Edit, Duplicate, Delete (buttons under the list and
a context menu), Import/Export of character cards, and dropping a card file onto the list.

The list only asks for actions (signals); ``app.ui.persona_actions`` carries them out and
hands the reloaded personas back through ``set_personas``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QSize, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import (
    QAction,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QImage,
    QImageReader,
    QPainter,
    QPainterPath,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.personas.model import Persona
from app.ui import theme
from app.ui.elided_label import ElidedLabel
from app.ui.face import render_thumbnail
from app.ui.plain import plain_tooltip

THUMB = 44
MAX_PICTURE_BYTES = 20 * 1024 * 1024
CARD_SUFFIXES = (".png", ".json")
SETTLE_MS = 400
"""Arrow keys switch persona only once the selection rests this long (each switch starts
warming a prompt and loading voices); Enter and a click switch at once."""


def load_picture(path: Path | None, size: int, ratio: float = 1.0) -> QPixmap | None:
    """A persona's picture cut to a circle, or None when there is none or it won't load.

    The file size is checked first, and Qt's reader is asked to scale while decoding, so
    a huge or hostile picture costs neither the memory nor the time of its full size."""
    if path is None:
        return None
    try:
        if not path.is_file() or path.stat().st_size > MAX_PICTURE_BYTES:
            return None
    except OSError:
        return None
    reader = QImageReader(str(path))
    original = reader.size()
    if not original.isValid() or original.width() > 8192 or original.height() > 8192:
        return None
    px = max(1, round(size * ratio))
    scaled = original.scaled(px, px, Qt.AspectRatioMode.KeepAspectRatioByExpanding)
    reader.setScaledSize(scaled)
    picture = reader.read()
    if picture.isNull():
        return None
    out = QImage(px, px, QImage.Format.Format_ARGB32_Premultiplied)
    out.fill(Qt.GlobalColor.transparent)
    painter = QPainter(out)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    clip = QPainterPath()
    clip.addEllipse(0, 0, px, px)
    painter.setClipPath(clip)
    painter.drawImage((px - picture.width()) // 2, (px - picture.height()) // 2, picture)
    painter.end()
    pixmap = QPixmap.fromImage(out)
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


def persona_thumbnail(persona: Persona, image: Path | None, size: int,
                      ratio: float) -> QPixmap:
    return load_picture(image, size, ratio) or render_thumbnail(persona.avatar, size, ratio)


class _PersonaRow(QWidget):
    def __init__(self, persona: Persona, ratio: float, image: Path | None,
                 builtin: bool) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(12)
        face = QLabel()
        face.setPixmap(persona_thumbnail(persona, image, THUMB, ratio))
        face.setFixedSize(THUMB, THUMB)
        layout.addWidget(face)
        text = QVBoxLayout()
        text.setSpacing(2)
        name = ElidedLabel(persona.name, lines=1)
        name.setStyleSheet("font-size: 14px; font-weight: 600; background: transparent;")
        name.polish_height()
        description = ElidedLabel(persona.description, lines=2)  # the rest: the tooltip
        description.setStyleSheet(f"color: {theme.MUTED_TEXT}; font-size: 12px;"
                                  " background: transparent;")
        description.polish_height()
        text.addWidget(name)
        text.addWidget(description)
        layout.addLayout(text, 1)
        origin = "Built-in persona (duplicate it to change it)" if builtin else "Your persona"
        self.setToolTip(plain_tooltip(f"{persona.name}\n{persona.description}\n{origin}"))


class PersonaSidebar(QListWidget):
    """Emits ``persona_selected`` with the Persona when the user picks another one (a
    click, Enter, or a selection moved by the keyboard that rests ``SETTLE_MS``), and
    one signal per persona action (the persona it applies to, where there is one)."""

    persona_selected = Signal(object)
    new_requested = Signal()
    edit_requested = Signal(object)
    duplicate_requested = Signal(object)
    delete_requested = Signal(object)
    import_requested = Signal()
    export_requested = Signal(object)
    card_dropped = Signal(str)

    def __init__(self, personas: list[Persona], parent: QWidget | None = None,
                 builtin: set[str] | None = None,
                 images: dict[str, Path | None] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("personaList")
        self.setAccessibleName("Personas")
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        self.setAcceptDrops(True)
        self.setDragDropMode(QListWidget.DragDropMode.DropOnly)
        self.personas: list[Persona] = []
        self.builtin: set[str] = set()
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._choose)
        self.currentRowChanged.connect(self._changed)
        self.itemClicked.connect(self._choose)
        self.itemActivated.connect(self._choose)  # Enter, or a double click
        self.buttons = self._build_buttons()
        """New / Edit / Duplicate / Delete, for the window to place under the list."""
        self.set_personas(personas, builtin or set(), images or {})

    # ---- contents -------------------------------------------------------------------

    def set_personas(self, personas: list[Persona], builtin: set[str],
                     images: dict[str, Path | None], select: str | None = None) -> None:
        """Show ``personas`` (after a save, delete or import) keeping the selection on
        ``select`` (default: the current one) without emitting ``persona_selected``."""
        shown = self.current_persona()
        current = select or (shown.id if shown is not None else None)
        self.blockSignals(True)
        try:
            self.clear()
            self.personas = list(personas)
            self.builtin = set(builtin)
            ratio = self.devicePixelRatioF()
            for persona in self.personas:
                item = QListWidgetItem()
                row = _PersonaRow(persona, ratio, images.get(persona.id),
                                  persona.id in self.builtin)
                item.setSizeHint(QSize(120, max(76, row.sizeHint().height())))
                item.setData(Qt.ItemDataRole.UserRole, persona.id)
                self.addItem(item)
                self.setItemWidget(item, row)
            for i, persona in enumerate(self.personas):
                if persona.id == current:
                    self.setCurrentRow(i)
        finally:
            self.blockSignals(False)
        self._update_buttons()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Rows follow the list's width (a top-to-bottom list only re-lays its items out
        when its height changes): a narrower window must not cut descriptions off."""
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.scheduleDelayedItemsLayout()

    def select(self, persona_id: str) -> None:
        """Select ``persona_id`` and switch to it now (not after ``SETTLE_MS``)."""
        for i, persona in enumerate(self.personas):
            if persona.id == persona_id:
                self.setCurrentRow(i)
                self._choose()
                return

    def current_persona(self) -> Persona | None:
        row = self.currentRow()
        return self.personas[row] if 0 <= row < len(self.personas) else None

    def _changed(self, _row: int) -> None:
        self._update_buttons()
        self._settle.start()  # restarted by every step: only a resting selection counts

    def _choose(self, *_item: object) -> None:
        self._settle.stop()
        persona = self.current_persona()
        if persona is not None:
            self.persona_selected.emit(persona)

    # ---- actions --------------------------------------------------------------------

    def _build_buttons(self) -> QWidget:
        bar = QWidget()
        bar.setObjectName("personaButtons")
        layout = QGridLayout(bar)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(6)
        self.new_button = self._button("New", "Create a new persona", self.new_requested.emit)
        self.edit_button = self._button("Edit", "Edit the selected persona",
                                        lambda: self._emit(self.edit_requested))
        self.duplicate_button = self._button("Duplicate", "Copy the selected persona",
                                             lambda: self._emit(self.duplicate_requested))
        self.delete_button = self._button("Delete", "Delete the selected persona",
                                          lambda: self._emit(self.delete_requested))
        for i, button in enumerate((self.new_button, self.edit_button, self.duplicate_button,
                                    self.delete_button)):
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            layout.addWidget(button, i // 2, i % 2)  # two rows: the labels never elide
        return bar

    def _button(self, text: str, tip: str, slot: object) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setObjectName(f"persona{text}Button")
        button.clicked.connect(slot)
        return button

    def _emit(self, signal: SignalInstance) -> None:
        persona = self.current_persona()
        if persona is not None:
            signal.emit(persona)

    def _update_buttons(self) -> None:
        persona = self.current_persona()
        mine = persona is not None and persona.id not in self.builtin
        self.edit_button.setEnabled(mine)
        self.delete_button.setEnabled(mine)
        self.duplicate_button.setEnabled(persona is not None)
        if persona is not None and not mine:
            self.edit_button.setToolTip("Built-in personas are read-only: duplicate to change")
        else:
            self.edit_button.setToolTip("Edit the selected persona")

    def menu_for(self, persona: Persona | None) -> QMenu:
        """The context menu for ``persona`` (None: the empty part of the list)."""
        menu = QMenu(self)
        mine = persona is not None and persona.id not in self.builtin

        def add(text: str, slot: object, enabled: bool = True) -> QAction:
            action = menu.addAction(text)
            action.triggered.connect(slot)
            action.setEnabled(enabled)
            return action

        add("New persona…", self.new_requested.emit)
        if persona is not None:
            add("Edit…", lambda: self.edit_requested.emit(persona), mine)
            add("Duplicate…", lambda: self.duplicate_requested.emit(persona))
            add("Delete…", lambda: self.delete_requested.emit(persona), mine)
        menu.addSeparator()
        add("Import character card…", self.import_requested.emit)
        if persona is not None:
            add("Export as character card…", lambda: self.export_requested.emit(persona))
        return menu

    def _context_menu(self, pos: QPoint) -> None:
        item = self.itemAt(pos)
        persona = None
        if item is not None:
            persona = self.personas[self.row(item)]
        self.menu_for(persona).exec(self.viewport().mapToGlobal(pos))

    # ---- dropping a card --------------------------------------------------------------

    @staticmethod
    def _card_path(event: QDropEvent | QDragEnterEvent | QDragMoveEvent) -> str | None:
        mime = event.mimeData()
        if not mime.hasUrls():
            return None
        for url in mime.urls():
            if url.isLocalFile() and url.toLocalFile().lower().endswith(CARD_SUFFIXES):
                return str(url.toLocalFile())
        return None

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._card_path(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if self._card_path(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        path = self._card_path(event)
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.card_dropped.emit(path)

