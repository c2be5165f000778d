"""The test MCP server as a user would configure it, and a hub that waits for it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from app.tools.mcp_config import McpServer, McpToolChoice
from app.tools.mcp_hub import McpHub, ServerStatus

SERVER_SCRIPT = Path(__file__).with_name("mcp_server.py")
EVERY_TOOL = ("capital_of", "add_event", "sleep_for", "crash", "junk", "babble",
              "env_var")


def atlas(events: Path, name: str = "Atlas", ticked: tuple[str, ...] = EVERY_TOOL,
          **env: str) -> McpServer:
    """The test server, started with this Python, its tools ``ticked`` on."""
    return McpServer(name=name, command=sys.executable, args=(str(SERVER_SCRIPT),),
                     env={"EVENTS_FILE": str(events), **env},
                     tools={t: McpToolChoice(enabled=True) for t in ticked})


class Faults:
    """``on_fault`` for the tests: what was reported, in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def __call__(self, server: str, message: str) -> None:
        self.seen.append((server, message))


def wait_for(hub: McpHub, ready: Callable[[list[ServerStatus]], bool],
             timeout_s: float = 30.0) -> list[ServerStatus]:
    """Block until ``ready(hub.status())`` (woken by the hub's listeners, no polling)."""
    changed = threading.Event()
    unsubscribe = hub.subscribe(changed.set)
    try:
        while not ready(status := hub.status()):
            assert changed.wait(timeout_s), f"the hub never got there: {status}"
            changed.clear()
        return status
    finally:
        unsubscribe()


def settled(status: list[ServerStatus]) -> bool:
    return all(s.state not in ("connecting",) for s in status)


@contextmanager
def running_hub(*servers: McpServer, **kwargs: object) -> Iterator[McpHub]:
    hub = McpHub(servers, **kwargs)  # type: ignore[arg-type]
    try:
        wait_for(hub, settled)
        yield hub
    finally:
        hub.close()
