"""What the hub says about each of the user's MCP servers, and what it asks the window
to keep: plain values, shared by the hub, the dialog and the window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.tools.mcp_bridge import Listing
from app.tools.mcp_config import McpServer

__all__ = ["NO_TOOLS", "Listing", "ServerStatus", "ServersChanged", "State"]

NO_TOOLS = Listing(())
State = Literal["off", "connecting", "connected", "stopped", "failed"]
"""off: the user switched it off; stopped: its process exited (the next call starts it
again); failed: it could not be started (its tools are withdrawn)."""


@dataclass(frozen=True)
class ServersChanged:
    """The user changed the servers or a tool's ticks: what the settings keep now (posted
    to the window, which saves it on the GUI thread)."""

    servers: tuple[McpServer, ...]


@dataclass(frozen=True)
class ServerStatus:
    """What the dialog shows for one server."""

    name: str
    state: State
    message: str = ""
    """Why it failed or stopped ("" when connected)."""
    listing: Listing = NO_TOOLS
    """Every tool it offers (enabled or not) and the ones left out."""
