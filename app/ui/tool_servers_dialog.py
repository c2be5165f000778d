"""Hanasu → Tool servers: the user's MCP servers, each one's state, and its tools with a
tick to hand each to the model and, for one that changes things, to run it without asking.

A server is added as a command line (started by the app, spoken to over stdin/stdout) or
as an address on this computer; any other address is refused with the reason, as nothing
leaves the machine. A new server's tools are all off until ticked: the user decides what
the model may use. Starting a server happens on the hub's own thread: the dialog only
reads the hub's state, redrawn when the hub says it changed (its listeners run on other
threads, so they only emit a queued signal; everything Qt happens here, on the GUI thread).
"""

from __future__ import annotations

import logging

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.tools.mcp_config import McpServer, check_local_url, parse_command_line
from app.tools.mcp_hub import McpHub, ServerStatus
from app.ui import keyboard
from app.ui.plain import plain, plain_tooltip

log = logging.getLogger(__name__)

STATE_TEXT = {"off": "off", "connecting": "starting…", "connected": "connected",
              "stopped": "stopped (starts again when used)", "failed": "failed"}
USE, ALWAYS, ABOUT = 0, 1, 2
"""The tool list's columns: the tick (with the tool's name), always allow, description."""


def status_line(status: ServerStatus) -> str:
    """One server as the list shows it."""
    line = f"{status.name} — {STATE_TEXT[status.state]}"
    if status.state == "connected":
        count = len(status.listing.tools)
        line += f", {count} tool{'s' * (count != 1)}"
    if status.message and status.state in ("failed", "stopped"):
        line += f": {status.message}"
    return line


def server_from(name: str, where: str) -> McpServer:
    """The server the user typed: an http(s) address (on this computer) or a command line;
    ``ValueError`` with a line for the user when it cannot be one."""
    name, where = name.strip(), where.strip()
    if not name:
        raise ValueError("Give the server a name.")
    if not where:
        raise ValueError("Give a command to start it, or its address on this computer.")
    try:
        if "://" in where:
            return McpServer(name=name, url=check_local_url(where))
        command, args = parse_command_line(where)
        return McpServer(name=name, command=command, args=args)
    except ValidationError as exc:
        raise ValueError(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from exc


class ToolServersDialog(QDialog):
    changed = Signal()
    """The hub's state changed (emitted from any thread; redrawn on the GUI thread)."""

    def __init__(self, hub: McpHub, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tool servers")
        self.resize(760, 560)
        self.hub = hub
        layout = QVBoxLayout(self)
        intro = QLabel("Tool servers (Model Context Protocol) give the model more tools. "
                       "Tick the ones it may use; one that changes things asks you first "
                       "unless you tick “Always allow”.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.servers = QListWidget()
        self.servers.setAccessibleName("Tool servers")
        self.servers.currentRowChanged.connect(lambda _row: self._show_tools())
        layout.addWidget(self.servers, 1)
        buttons = QHBoxLayout()
        self.reconnect_button = QPushButton("&Reconnect")
        self.reconnect_button.clicked.connect(self._reconnect)
        self.remove_button = QPushButton("Re&move")
        self.remove_button.clicked.connect(self._remove)
        buttons.addWidget(self.reconnect_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.tools = QTreeWidget()
        self.tools.setAccessibleName("Tools of the selected server")
        self.tools.setHeaderLabels(["Use", "Always allow", "What it does"])
        self.tools.header().setAccessibleName("Tool columns")
        self.tools.setRootIsDecorated(False)
        self.tools.setColumnWidth(USE, 220)
        self.tools.setColumnWidth(ALWAYS, 110)
        self.tools.itemChanged.connect(self._ticked)
        layout.addWidget(self.tools, 2)
        self.dropped = plain(QLabel())
        self.dropped.setWordWrap(True)
        layout.addWidget(self.dropped)
        layout.addWidget(self._add_row())
        self.error = plain(QLabel())
        self.error.setObjectName("toolServerError")
        self.error.setWordWrap(True)
        layout.addWidget(self.error)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)
        self.changed.connect(self.refresh, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = hub.subscribe(self.changed.emit)
        self.refresh()
        keyboard.prepare(self)

    def _add_row(self) -> QWidget:
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("Name")
        self.name_edit.setAccessibleName("New server's name")
        self.name_edit.setMaximumWidth(160)
        self.where_edit = QLineEdit()
        self.where_edit.setPlaceholderText("Command line (uvx some-server) or "
                                           "http://127.0.0.1:PORT/mcp")
        self.where_edit.setAccessibleName("New server's command line or local address")
        self.where_edit.returnPressed.connect(self.add_server)
        self.add_button = QPushButton("&Add server")
        self.add_button.clicked.connect(self.add_server)
        line.addWidget(self.name_edit)
        line.addWidget(self.where_edit, 1)
        line.addWidget(self.add_button)
        return row

    # ---- actions (GUI thread) -------------------------------------------------------

    def add_server(self) -> None:
        try:
            server = server_from(self.name_edit.text(), self.where_edit.text())
            if any(s.name.lower() == server.name.lower() for s in self.hub.servers):
                raise ValueError(f"There is already a server called {server.name}.")
            self.hub.change([*self.hub.servers, server])
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        self.error.clear()
        self.name_edit.clear()
        self.where_edit.clear()
        self.refresh()
        self.servers.setCurrentRow(self.servers.count() - 1)

    def _selected(self) -> str | None:
        item = self.servers.currentItem()
        return None if item is None else str(item.data(Qt.ItemDataRole.UserRole))

    def _remove(self) -> None:
        name = self._selected()
        if name is not None:
            self.hub.change([s for s in self.hub.servers if s.name != name])
            self.refresh()

    def _reconnect(self) -> None:
        name = self._selected()
        if name is not None:
            self.hub.reconnect(name)

    def _ticked(self, item: QTreeWidgetItem, column: int) -> None:
        server, remote = self._selected(), item.data(USE, Qt.ItemDataRole.UserRole)
        if server is None or remote is None or column not in (USE, ALWAYS):
            return
        checked = item.checkState(column) == Qt.CheckState.Checked
        if column == USE:
            self.hub.choose(server, str(remote), enabled=checked)
        else:
            self.hub.choose(server, str(remote), always_allow=checked)

    # ---- drawing --------------------------------------------------------------------

    def refresh(self) -> None:
        """Redraw the servers (keeping the selection) and the selected one's tools."""
        selected = self._selected()
        self.servers.blockSignals(True)
        self.servers.clear()
        for status in self.hub.status():
            item = QListWidgetItem(status_line(status))
            item.setData(Qt.ItemDataRole.UserRole, status.name)
            item.setToolTip(plain_tooltip(status_line(status)))
            self.servers.addItem(item)
            if status.name == selected:
                self.servers.setCurrentItem(item)
        if self.servers.currentItem() is None and self.servers.count():
            self.servers.setCurrentRow(0)
        self.servers.blockSignals(False)
        has_server = self.servers.currentItem() is not None
        self.remove_button.setEnabled(has_server)
        self.reconnect_button.setEnabled(has_server)
        self._show_tools()

    def _show_tools(self) -> None:
        name = self._selected()
        status = next((s for s in self.hub.status() if s.name == name), None)
        server = next((s for s in self.hub.servers if s.name == name), None)
        self.tools.blockSignals(True)
        self.tools.clear()
        if status is not None and server is not None:
            for offered in status.listing.tools:
                choice = server.choice(offered.remote)
                item = QTreeWidgetItem([offered.remote, "", offered.spec.description])
                item.setData(USE, Qt.ItemDataRole.UserRole, offered.remote)
                item.setCheckState(USE, _check(choice.enabled))
                if offered.spec.side_effects:
                    item.setCheckState(ALWAYS, _check(choice.always_allow))
                    item.setToolTip(ALWAYS, "It may change things: without this tick, "
                                            "you are asked before each use.")
                else:
                    item.setText(ALWAYS, "read-only")
                item.setToolTip(ABOUT, plain_tooltip(offered.spec.description))
                self.tools.addTopLevelItem(item)
        self.tools.blockSignals(False)
        dropped = status.listing.dropped if status is not None else ()
        self.dropped.setText("\n".join(dropped))
        self.dropped.setVisible(bool(dropped))

    def tool_item(self, remote: str) -> QTreeWidgetItem | None:
        """The row of the selected server's tool ``remote`` (tests, accessibility)."""
        for i in range(self.tools.topLevelItemCount()):
            item = self.tools.topLevelItem(i)
            if item is not None and item.data(USE, Qt.ItemDataRole.UserRole) == remote:
                return item
        return None

    def closeEvent(self, event: QCloseEvent) -> None:
        self._unsubscribe()
        super().closeEvent(event)


def _check(on: bool) -> Qt.CheckState:
    return Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
