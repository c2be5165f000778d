"""One MCP server's connection, on the hub's event loop: started, listed, called, closed.

The SDK's transports and its ``ClientSession`` are async context managers whose task
groups must be entered and left by one task, so each connection is one task (``_hold``)
that opens them, hands the session out, and waits to be told to close. Calls are made
from other tasks on the same loop (a session serves concurrent requests). Every wait has
a bound: opening (``open``'s timeout) and closing (the SDK itself stops a server that
does not exit when its stdin closes: terminate, then kill, each bounded).

The SDK (``mcp``) is imported here, inside functions, when a server is first started:
importing the tool layer stays light.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO

from app.tools.mcp_bridge import clean_text
from app.tools.mcp_config import McpServer

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult
    from mcp.types import Tool as ServerTool

log = logging.getLogger(__name__)

CLOSE_TIMEOUT_S = 6.0
"""The SDK's own stop sequence for a stdio server is bounded by about 4.5 s."""
MAX_PAGES = 20
"""A server whose tool list never ends is cut there."""
MAX_REASON = 300


class LinkFailed(Exception):
    """The server could not be started or reached; ``str()`` is one line for the user."""


class LinkDead(LinkFailed):
    """The connection ended (the server's process exited, the socket closed)."""


def reason(exc: BaseException) -> str:
    """One line for an error that may be wrapped in the SDK's task-group exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return clean_text(text.splitlines()[0] if text.strip() else type(exc).__name__)[:MAX_REASON]


def is_closed(exc: BaseException) -> bool:
    """Whether ``exc`` says the connection is gone (as opposed to one request failing)."""
    import anyio
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.error.code == CONNECTION_CLOSED
    return isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError
                      | anyio.EndOfStream | ConnectionError | EOFError)


class Link:
    """One server's session, owned by one task on the hub's loop (call from that loop)."""

    def __init__(self, server: McpServer, env: Mapping[str, str] | None = None) -> None:
        self.server = server
        self.env = dict(env or {})
        """Set for a started server beneath its own ``env`` (the app's privacy switches)."""
        self.session: ClientSession | None = None
        self.dead = False
        self.on_list_changed: Callable[[], None] | None = None
        """Called on the loop when the server says its tools changed."""
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._errlog: TextIO | None = None

    async def open(self, timeout_s: float) -> list[ServerTool]:
        """Start the server and list its tools; ``LinkFailed`` (with why) if that does not
        finish within ``timeout_s``."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[ServerTool]] = loop.create_future()
        self._closing = asyncio.Event()
        self._task = loop.create_task(self._hold(ready, self._closing),
                                      name=f"mcp-{self.server.name}")
        try:
            return await asyncio.wait_for(asyncio.shield(ready), timeout_s)
        except TimeoutError:
            why = self._with_stderr(f"it did not answer within {timeout_s:.0f} s")
            await self.close()
            raise LinkFailed(why) from None
        except asyncio.CancelledError:
            await self.close()
            raise
        except Exception as exc:
            why = self._with_stderr(reason(exc))
            await self.close()
            raise LinkFailed(why) from exc

    async def _hold(self, ready: asyncio.Future[list[ServerTool]],
                    closing: asyncio.Event) -> None:
        from mcp import ClientSession

        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=self._on_message))
                await session.initialize()
                tools = await _list_all(session)
                self.session = session
                if not ready.done():
                    ready.set_result(tools)
                await closing.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(LinkFailed(reason(exc)))
            else:
                log.info("MCP %s: the connection ended: %s", self.server.name, reason(exc))
        finally:
            self.session = None
            self.dead = True

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        server = self.server
        if server.url is not None:
            return _local_http(server.url)
        from mcp import StdioServerParameters, stdio_client

        if self._errlog is None:  # what the server says on stderr: the reason it failed
            self._errlog = tempfile.TemporaryFile(  # noqa: SIM115 (closed by close())
                "w+", encoding="utf-8", errors="replace")
        params = StdioServerParameters(command=server.command or "", args=list(server.args),
                                       env={**self.env, **server.env} or None)
        return stdio_client(params, errlog=self._errlog)

    def _with_stderr(self, why: str) -> str:
        """``why``, and the last line the server wrote on stderr if it wrote one."""
        errlog = self._errlog
        if errlog is None:
            return why
        try:
            errlog.seek(0)
            lines = [line.strip() for line in errlog.read()[-4000:].splitlines() if line.strip()]
        except (OSError, ValueError):
            return why
        return f"{why} (it said: {clean_text(lines[-1])[:MAX_REASON]})" if lines else why

    async def _on_message(self, message: object) -> None:
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification) and self.on_list_changed:
            self.on_list_changed()  # it only schedules: the session's reader waits on us

    async def list_tools(self) -> list[ServerTool]:
        """The server's tools now (the hub bounds it)."""
        session = self.session
        if session is None or self.dead:
            raise LinkDead("it is not running")
        return await _list_all(session)

    async def call(self, remote: str, arguments: Mapping[str, object]) -> CallToolResult:
        """One call (the hub bounds it); ``LinkDead`` when the connection is gone."""
        session = self.session
        if session is None or self.dead:
            raise LinkDead("it is not running")
        try:
            return await session.call_tool(remote, dict(arguments))
        except Exception as exc:
            if is_closed(exc):
                self.dead = True
                raise LinkDead(self._with_stderr("it stopped (the connection closed)")) from exc
            raise

    async def close(self) -> None:
        """Stop the server (bounded); safe to call twice."""
        task, closing = self._task, self._closing
        self._task = None
        if task is not None and closing is not None:
            if self.session is not None:
                closing.set()  # connected: leave the contexts in order
            else:
                task.cancel()  # still starting: nothing waits for ``closing`` yet
            try:
                await asyncio.wait_for(task, CLOSE_TIMEOUT_S)
            except (TimeoutError, asyncio.CancelledError):
                log.warning("MCP %s: did not close in time", self.server.name)
            except Exception as exc:
                log.info("MCP %s: closed with %s", self.server.name, reason(exc))
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None
        self.dead = True


async def _list_all(session: ClientSession) -> list[ServerTool]:
    from mcp.types import PaginatedRequestParams

    listed = await session.list_tools()
    tools = list(listed.tools)
    for _ in range(MAX_PAGES):
        if not listed.next_cursor:
            break
        listed = await session.list_tools(params=PaginatedRequestParams(cursor=listed.next_cursor))
        tools += listed.tools
    return tools


@asynccontextmanager
async def _local_http(url: str) -> AsyncIterator[Any]:
    """Streamable HTTP to a server on this machine. The environment's proxy settings are
    not used (``trust_env=False``): a proxy would carry a local request off the machine."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(10.0, read=300.0)) \
            as client, streamable_http_client(url, http_client=client) as streams:
        yield streams
