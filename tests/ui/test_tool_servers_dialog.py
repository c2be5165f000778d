"""Hanasu → Tool servers, against the real test MCP server: add one by its command line,
see its tools (all off), tick one for the model and "always allow" another, see a failure
with its reason, refuse an address off the machine, remove it."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.storage.settings import Settings
from app.tools.mcp_config import McpServer
from app.tools.mcp_hub import McpHub, ServersChanged
from app.ui.dialogs import DialogLauncher
from app.ui.keyboard import interactive_widgets
from app.ui.session import Session
from app.ui.tool_servers_dialog import ToolServersDialog, status_line
from app.ui.window import MainWindow
from tests.tools.mcp_support import SERVER_SCRIPT

WAIT_MS = 30_000


@pytest.fixture
def hub() -> Iterator[McpHub]:
    hub = McpHub()
    yield hub
    hub.close()


def add(dialog: ToolServersDialog, qtbot: QtBot, name: str, where: str) -> None:
    dialog.name_edit.setText(name)
    dialog.where_edit.setText(where)
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)


def listed(dialog: ToolServersDialog) -> list[str]:
    return [dialog.servers.item(i).text() for i in range(dialog.servers.count())]


def test_a_server_added_by_command_line_shows_its_tools_to_tick(
        qtbot: QtBot, hub: McpHub) -> None:
    saved: list[ServersChanged] = []
    hub.save = saved.append
    dialog = ToolServersDialog(hub)
    qtbot.addWidget(dialog)
    dialog.show()
    add(dialog, qtbot, "Atlas", shlex.join([sys.executable, str(SERVER_SCRIPT)]))
    assert dialog.error.text() == ""
    qtbot.waitUntil(lambda: listed(dialog) == ["Atlas — connected, 8 tools"], timeout=WAIT_MS)
    capital, event = dialog.tool_item("capital_of"), dialog.tool_item("add_event")
    assert capital is not None and event is not None
    assert capital.checkState(0) == Qt.CheckState.Unchecked  # off until ticked
    assert capital.text(1) == "read-only" and capital.text(2) == "The capital city of a country."
    assert hub.tools() == []

    capital.setCheckState(0, Qt.CheckState.Checked)
    assert [t.spec.name for t in hub.tools()] == ["atlas__capital_of"]
    event = dialog.tool_item("add_event")
    assert event is not None
    assert event.checkState(1) == Qt.CheckState.Unchecked and hub.needs_confirmation(
        "atlas__add_event")
    event.setCheckState(1, Qt.CheckState.Checked)
    assert not hub.needs_confirmation("atlas__add_event")
    stored = saved[-1].servers[0]
    assert stored.command == sys.executable and stored.args == (str(SERVER_SCRIPT),)
    assert stored.choice("capital_of").enabled and stored.choice("add_event").always_allow

    dialog.servers.setCurrentRow(0)
    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    assert hub.servers == () and listed(dialog) == [] and saved[-1].servers == ()


def test_an_address_off_the_machine_is_refused_with_the_reason(
        qtbot: QtBot, hub: McpHub) -> None:
    dialog = ToolServersDialog(hub)
    qtbot.addWidget(dialog)
    add(dialog, qtbot, "Cloud", "https://tools.example.com/mcp")
    assert "not on this computer" in dialog.error.text()
    assert hub.servers == () and dialog.name_edit.text() == "Cloud"  # kept to correct
    add(dialog, qtbot, "", "uvx thing")
    assert dialog.error.text() == "Give the server a name."
    add(dialog, qtbot, "my notes", "uvx notes-server")
    add(dialog, qtbot, "My-Notes", "uvx other-server")  # its tools would be my_notes__ too
    assert dialog.error.text() == "two tool servers are called 'My-Notes'"
    assert [s.name for s in hub.servers] == ["my notes"]


def test_a_server_that_fails_shows_why_and_can_be_reconnected(
        qtbot: QtBot, hub: McpHub, tmp_path: Path) -> None:
    dialog = ToolServersDialog(hub)
    qtbot.addWidget(dialog)
    script = tmp_path / "broken.py"
    script.write_text("import sys\nprint('missing API token', file=sys.stderr)\nsys.exit(1)\n")
    add(dialog, qtbot, "Broken", shlex.join([sys.executable, str(script)]))
    qtbot.waitUntil(lambda: "failed" in listed(dialog)[0], timeout=WAIT_MS)
    assert "missing API token" in listed(dialog)[0]
    assert dialog.tools.topLevelItemCount() == 0
    script.write_text(SERVER_SCRIPT.read_text())
    qtbot.mouseClick(dialog.reconnect_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: listed(dialog) == ["Broken — connected, 8 tools"], timeout=WAIT_MS)
    [status] = hub.status()
    assert status_line(status) == "Broken — connected, 8 tools"


def test_the_window_opens_it_stores_its_changes_and_shows_faults(
        qtbot: QtBot, window: MainWindow, saved: list[Settings]) -> None:
    session = Session(window.bridge.post, fake=True, parent=window)
    session.mcp.save = window.bridge.post  # as run_app wires it
    DialogLauncher(window, session, restart=lambda _settings: None)
    try:
        window.menus.tool_servers_action.trigger()
        [dialog] = [d for d in window.findChildren(ToolServersDialog) if d.isVisible()]
        assert dialog.hub is session.mcp
        server = McpServer(name="notes", url="http://127.0.0.1:9/mcp")  # nothing listens
        dialog.hub.change([server])
        qtbot.waitUntil(lambda: window.settings.mcp_servers == (server,), timeout=3000)
        qtbot.waitUntil(lambda: bool(saved) and saved[-1].mcp_servers == (server,),
                        timeout=3000)
        qtbot.waitUntil(lambda: any("The tool server notes could not start" in m
                                    for m in window.notices.messages), timeout=WAIT_MS)
    finally:
        session.shutdown()


def test_every_control_has_a_name_a_screen_reader_can_say(qtbot: QtBot, hub: McpHub) -> None:
    dialog = ToolServersDialog(hub)
    qtbot.addWidget(dialog)
    assert [w for w in interactive_widgets(dialog) if not w.accessibleName().strip()] == []
    assert dialog.where_edit.accessibleName() == "New server's command line or local address"
