"""The user's MCP servers, running: one asyncio loop on a background thread holds a
session per enabled server, and the tools the user ticked are offered as app ``Tool``s.

Nothing here may stall a conversation. A call waits at most ``call_timeout_s`` in all (a
restart included), under the reply's own 10 s bound, and returns at once when its turn
is cancelled; the server's task is cancelled on the loop. A server that hangs, crashes or
answers with junk gives a failed result with an apology in the call's language, and
``on_fault(server, message)`` tells the window. A server whose process exited is started
again by the next call to one of its tools, once; if that fails too its tools are
withdrawn (``subscribe``'s listeners hear of it) until the user reconnects it.

Threads: every public method may be called from any thread and returns quickly, except
``close`` (bounded). ``on_fault``, ``save`` and the listeners are called on the hub's
thread or the caller's: they must only post (the window's bridge) or take a lock.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any

from app.tools import phrases
from app.tools.mcp_bridge import McpTool, Offered, answer, offered_tools, sorry
from app.tools.mcp_config import McpServer, check_servers, server_prefix
from app.tools.mcp_link import Link, LinkDead, LinkFailed, reason
from app.tools.mcp_status import NO_TOOLS, Listing, ServersChanged, ServerStatus, State
from app.tools.spec import Arguments, Tool, ToolResult, ToolSpec

__all__ = ["McpHub", "ServerStatus", "ServersChanged"]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 20.0
"""Starting a server in the background: a Python one takes a second or more to import."""
CALL_TIMEOUT_S = 8.0
"""One call in all, a restart included: under ``tool_rounds.TOOL_TIMEOUT_S``, so the
apology heard is the hub's own."""
CLOSE_TIMEOUT_S = 5.0
GRACE_S = 0.5
"""The caller's hard bound is this much past the loop's own deadline."""
Fault = Callable[[str, str], None]
Save = Callable[[ServersChanged], None]


class McpHub:
    """The user's servers, started and called; see the module's docstring."""

    def __init__(self, servers: Sequence[McpServer] = (), on_fault: Fault | None = None,
                 save: Save | None = None, connect_timeout_s: float = CONNECT_TIMEOUT_S,
                 call_timeout_s: float = CALL_TIMEOUT_S,
                 env: Mapping[str, str] | None = None) -> None:
        self.env = dict(env or {})
        """Given to every server started (``privacy.child_environment()``)."""
        self.on_fault = on_fault
        """Told ``(server, message)`` when a server fails, hangs or answers with junk."""
        self.save = save
        """Told the servers after each change the user made (persist them)."""
        self.connect_timeout_s, self.call_timeout_s = connect_timeout_s, call_timeout_s
        self._lock = threading.Lock()
        self._servers: dict[str, McpServer] = {}
        self._status: dict[str, ServerStatus] = {}
        self._links: dict[str, Link] = {}
        """Loop thread only (and ``_tasks``)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._restarting: dict[str, asyncio.Lock] = {}
        self._generation: dict[str, int] = {}
        self._listeners: list[Callable[[], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self.configure(servers)

    # ---- what the app reads ---------------------------------------------------------

    @property
    def servers(self) -> tuple[McpServer, ...]:
        with self._lock:
            return tuple(self._servers.values())

    def status(self) -> list[ServerStatus]:
        with self._lock:
            return [self._status[name] for name in self._servers]

    def tools(self) -> list[Tool]:
        """The tools the user ticked, of the servers that are running (or will restart)."""
        with self._lock:
            return [McpTool(offered, self._call)
                    for name, server in self._servers.items()
                    if self._status[name].state in ("connected", "stopped")
                    for offered in self._status[name].listing.tools
                    if server.choice(offered.remote).enabled]

    def wait_ready(self, timeout_s: float = CONNECT_TIMEOUT_S) -> bool:
        """Block until no server is still starting (at most ``timeout_s``): for a run that
        has one question to ask. True when all have started or failed."""
        changed = threading.Event()
        unsubscribe = self.subscribe(changed.set)
        deadline = time.monotonic() + timeout_s
        try:
            while any(s.state == "connecting" for s in self.status()):
                left = deadline - time.monotonic()
                if left <= 0 or not changed.wait(left):
                    return False
                changed.clear()
            return True
        finally:
            unsubscribe()

    def find(self, tool_name: str) -> Offered | None:
        with self._lock:
            for status in self._status.values():
                for offered in status.listing.tools:
                    if offered.spec.name == tool_name:
                        return offered
        return None

    def needs_confirmation(self, tool_name: str) -> bool:
        """It may change something and the user has not said "always allow" (an unknown
        name asks too)."""
        offered = self.find(tool_name)
        if offered is None:
            return True
        with self._lock:
            server = self._servers.get(offered.server)
        return offered.spec.side_effects and (
            server is None or not server.choice(offered.remote).always_allow)

    def allow_always(self, tool_name: str) -> None:
        """Run ``tool_name`` without asking from now on (saved)."""
        offered = self.find(tool_name)
        if offered is not None:
            self.choose(offered.server, offered.remote, always_allow=True)

    def choose(self, server_name: str, remote: str, **choice: bool) -> None:
        """The user ticked or unticked ``enabled`` / ``always_allow`` for a tool (saved)."""
        with self._lock:
            server = self._servers.get(server_name)
        if server is not None:
            self.change([server.with_choice(remote, **choice) if s.name == server_name else s
                         for s in self.servers])

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """``listener()`` after each change of a server's state or of the offered tools;
        returns the function that unsubscribes it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def offer(self, set_tools: Callable[[Sequence[Tool]], None]) -> Callable[[], None]:
        """Hand the ticked tools to ``set_tools`` (``ToolDesk.set_extra_tools``) now and
        again whenever the set changes; returns the function that stops it."""
        offered: list[tuple[ToolSpec, ...]] = []

        def refresh() -> None:
            tools = self.tools()
            specs = tuple(tool.spec for tool in tools)
            if not offered or offered[-1] != specs:
                offered[:] = [specs]
                set_tools(tools)

        unsubscribe = self.subscribe(refresh)
        refresh()
        return unsubscribe

    # ---- changing the servers ---------------------------------------------------------

    def change(self, servers: Sequence[McpServer]) -> None:
        """The user's change (the dialog): applied, then saved (``save`` is told)."""
        self.configure(servers)
        if self.save is not None:
            self.save(ServersChanged(self.servers))

    def configure(self, servers: Sequence[McpServer]) -> None:
        """Use ``servers`` (as stored): new or changed ones are (re)started in the
        background, removed ones stopped; a change of ticks only changes the tools.
        ``ValueError`` when two names would prefix their tools alike."""
        check_servers(tuple(servers))
        restart: list[str] = []
        stop: list[str] = []
        with self._lock:
            old = self._servers
            self._servers = {s.name: s for s in servers}
            for name in old.keys() - self._servers.keys():
                stop.append(name)
                self._status.pop(name, None)
            for name, server in self._servers.items():
                before = old.get(name)
                if before is None or before.connection != server.connection:
                    self._status[name] = ServerStatus(name, "connecting" if server.enabled
                                                      else "off")
                    restart.append(name)
        for name in stop + restart:
            self._submit(self._restart(name))
        self._changed()

    def reconnect(self, server_name: str) -> None:
        """Start a server again (the dialog's Reconnect)."""
        with self._lock:
            if server_name not in self._servers:
                return
            self._status[server_name] = ServerStatus(server_name, "connecting")
        self._submit(self._restart(server_name))
        self._changed()

    def close(self, timeout_s: float = CLOSE_TIMEOUT_S) -> None:
        """Stop every server and the loop, within ``timeout_s`` (at exit)."""
        with self._lock:
            self._closed, loop, thread = True, self._loop, self._thread
            self._loop = self._thread = None  # a second close has nothing to wait for
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._close_links(), loop).result(timeout_s)
        except (concurrent.futures.TimeoutError, RuntimeError):
            log.warning("MCP servers did not all stop within %.0f s", timeout_s)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(1.0)
        if not thread.is_alive():
            loop.close()

    # ---- the loop -------------------------------------------------------------------

    def _submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        with self._lock:
            if self._closed:
                coro.close()
                done: concurrent.futures.Future[Any] = concurrent.futures.Future()
                done.set_exception(LinkFailed("the tool servers were closed"))
                return done
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever,
                                                name="mcp-hub", daemon=True)
                self._thread.start()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coro, loop)

    async def _restart(self, name: str, timeout_s: float | None = None) -> Link | None:
        """Stop ``name``'s link and, if it is configured and enabled, start a new one."""
        self._generation[name] = generation = self._generation.get(name, 0) + 1
        old = self._links.pop(name, None)
        if old is not None:
            await old.close()
        with self._lock:
            server = self._servers.get(name)
        if server is None or not server.enabled:
            return None
        link = Link(server, self.env)
        try:
            listed = await link.open(timeout_s or self.connect_timeout_s)
        except LinkFailed as exc:
            if self._generation.get(name) == generation:
                self._fault(name, f"The tool server {name} could not start: {exc}")
                self._set(name, "failed", str(exc), NO_TOOLS)
            return None
        if self._generation.get(name) != generation or self._closed:
            await link.close()  # superseded while it started
            return None
        self._links[name] = link
        link.on_list_changed = lambda: self._spawn(self._relist(name, link))
        self._set(name, "connected", "", offered_tools(name, server_prefix(name), listed))
        log.info("MCP %s: connected", name)
        return link

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` on the loop as its own task (kept until it ends)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _relist(self, name: str, link: Link) -> None:
        """The server said its tools changed: list them again (bounded)."""
        try:
            listed = await asyncio.wait_for(link.list_tools(), self.call_timeout_s)
        except Exception as exc:
            log.warning("MCP %s: listing its tools again failed: %s", name, reason(exc))
            return
        if self._links.get(name) is link:
            self._set(name, "connected", "", offered_tools(name, server_prefix(name), listed))

    async def _close_links(self) -> None:
        links, self._links = list(self._links.values()), {}
        await asyncio.gather(*(link.close() for link in links), return_exceptions=True)

    # ---- a call ---------------------------------------------------------------------

    def _call(self, offered: Offered, arguments: Arguments, cancel: threading.Event,
              language: str) -> ToolResult:
        """Runs on the caller's thread; returns within ``call_timeout_s`` (+ a grace)."""
        deadline = time.monotonic() + self.call_timeout_s
        future = self._submit(self._call_on_loop(offered, arguments, deadline, language))
        while True:
            try:
                return future.result(timeout=0.05)  # type: ignore[no-any-return]
            except concurrent.futures.TimeoutError:
                pass
            except LinkFailed as exc:
                return sorry(f"{offered.spec.name} was not run: {exc}.",
                              phrases.server_failed(offered.server, language))
            if cancel.is_set():
                future.cancel()
                return ToolResult.failure(f"{offered.spec.name} was stopped: the turn was "
                                          "cancelled.")
            if time.monotonic() > deadline + GRACE_S:
                future.cancel()
                return self._too_slow(offered, language)

    async def _call_on_loop(self, offered: Offered, arguments: Arguments, deadline: float,
                            language: str) -> ToolResult:
        name = offered.server
        async with self._restarting.setdefault(name, asyncio.Lock()):  # one restart at once
            link = self._links.get(name)
            if link is None or link.dead:
                if self._state(name) not in ("connected", "stopped"):
                    return sorry(f"{offered.spec.name} was not run: its server is not "
                                 "running.", phrases.server_failed(name, language))
                log.info("MCP %s: starting it again for a call", name)
                link = await self._restart(name, max(0.1, deadline - time.monotonic()))
                if link is None:  # _restart said why; its tools are withdrawn
                    return sorry(f"{offered.spec.name} was not run: its server could not be "
                                 "started again.", phrases.server_failed(name, language))
                offered = self.find(offered.spec.name) or offered
        try:
            result = await asyncio.wait_for(link.call(offered.remote, arguments),
                                            max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            return self._too_slow(offered, language)
        except LinkDead as exc:
            self._fault(name, f"The tool server {name} stopped during a call to "
                              f"{offered.remote}: {exc}. The next call starts it again.")
            self._set(name, "stopped", str(exc))
            return sorry(f"{offered.spec.name} failed: its server stopped.",
                          phrases.server_failed(name, language))
        except Exception as exc:  # a reply that is not MCP, a server-side error
            why = reason(exc)
            self._fault(name, f"The tool server {name} failed on {offered.remote}: {why}")
            return sorry(f"{offered.spec.name} failed: {why}",
                          phrases.server_failed(name, language))
        got = answer(result, offered, language)
        if got.fault is not None:
            self._fault(name, got.fault)
        return got.result

    def _too_slow(self, offered: Offered, language: str) -> ToolResult:
        self._fault(offered.server, f"The tool server {offered.server} did not answer "
                                    f"{offered.remote} within {self.call_timeout_s:.0f} s.")
        return sorry(
            f"{offered.spec.name} did not answer within {self.call_timeout_s:.0f} s.",
            phrases.server_too_slow(offered.server, language))

    # ---- bookkeeping ----------------------------------------------------------------

    def _state(self, name: str) -> State | None:
        with self._lock:
            status = self._status.get(name)
        return status.state if status else None

    def _set(self, name: str, state: State, message: str,
             listing: Listing | None = None) -> None:
        with self._lock:
            status = self._status.get(name)
            if status is None or name not in self._servers:
                return
            self._status[name] = replace(status, state=state, message=message,
                                         listing=status.listing if listing is None
                                         else listing)
        self._changed()

    def _changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:  # one listener's bug must not stop the others
                log.exception("an MCP listener failed")

    def _fault(self, server: str, message: str) -> None:
        log.warning("MCP %s", message)
        if self.on_fault is not None:
            try:
                self.on_fault(server, message)
            except Exception:
                log.exception("reporting an MCP fault failed")
