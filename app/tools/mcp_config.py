"""The user's Model Context Protocol servers, as the settings file keeps them.

A server is either a command the app starts and talks to over stdin/stdout, or a URL on
this machine (streamable HTTP). Nothing leaves the machine (see ``app/privacy.py``): a URL
must name the loopback interface (``127.0.0.0/8``, ``::1`` or ``localhost``), and any
other is refused with a message that says why.

Each tool a server offers is off until the user ticks it: a server may offer dozens of
tools, some that change things (files, calendars, messages), and the model should see only
the ones the user chose to hand it. A tool with side effects also asks before each call
unless the user ticked "always allow" for it.

These models sit in ``Settings.mcp_servers`` (frozen, validated: a bad entry in the file
sets the whole file aside, as any other invalid setting does, so nothing is lost).
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MAX_SERVERS = 32
MAX_NAME = 40
LOOPBACK_NAMES = ("localhost",)
_SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,39}")


class UrlNotLocal(ValueError):
    """A server URL that is not on this machine; ``str()`` is one line for the user."""


def check_local_url(url: str) -> str:
    """``url`` if it is an http(s) URL on the loopback interface; else ``UrlNotLocal``."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise UrlNotLocal(f"{url!r} is not an http:// or https:// address.")
    host = (parts.hostname or "").lower()
    if host in LOOPBACK_NAMES:
        return url.strip()
    try:
        local = ipaddress.ip_address(host).is_loopback
    except ValueError:
        local = False
    if not local:
        raise UrlNotLocal(
            f"{host or url!r} is not on this computer: Hanasu keeps everything on the "
            "machine, so a tool server's address must be 127.0.0.1, ::1 or localhost.")
    return url.strip()


class McpToolChoice(BaseModel):
    """What the user chose for one of a server's tools (by its name on the server)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    enabled: bool = False
    always_allow: bool = False
    """Run it without asking first, though it has side effects."""


class McpServer(BaseModel):
    """One server: ``command`` (+ ``args``, ``env``) to start, or a local ``url``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = Field(min_length=1, max_length=MAX_NAME)
    """The user's name for it; its tools are offered to the model as ``<name>__<tool>``."""
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    """Added to the few variables a server inherits (PATH, HOME, ...)."""
    url: str | None = None
    enabled: bool = True
    tools: dict[str, McpToolChoice] = Field(default_factory=dict)
    """The user's choices, by the tool's name on the server; absent: off."""

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not _SERVER_NAME.fullmatch(name):
            raise ValueError("a server's name is letters, digits, spaces, '.', '_' or '-'")
        return name

    @field_validator("url")
    @classmethod
    def _local(cls, url: str | None) -> str | None:
        return None if url is None else check_local_url(url)

    @model_validator(mode="after")
    def _one_way_in(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"server {self.name}: give either a command or a URL")
        if self.command is not None and not self.command.strip():
            raise ValueError(f"server {self.name}: the command is empty")
        return self

    @property
    def where(self) -> str:
        """How it is reached, as the dialog shows it."""
        return self.url or " ".join([self.command or "", *self.args]).strip()

    @property
    def connection(self) -> tuple[object, ...]:
        """What a running connection depends on: a change here restarts the server."""
        return (self.command, self.args, tuple(sorted(self.env.items())), self.url,
                self.enabled)

    def choice(self, tool: str) -> McpToolChoice:
        return self.tools.get(tool, McpToolChoice())

    def with_choice(self, tool: str, **changes: bool) -> McpServer:
        """A copy with the user's choice for ``tool`` changed."""
        choice = self.choice(tool).model_copy(update=changes)
        return self.model_copy(update={"tools": {**self.tools, tool: choice}})


def check_servers(servers: tuple[McpServer, ...]) -> tuple[McpServer, ...]:
    """Names must differ (they prefix the tools' names) and there is a sane upper bound."""
    if len(servers) > MAX_SERVERS:
        raise ValueError(f"at most {MAX_SERVERS} tool servers")
    seen: set[str] = set()
    for server in servers:
        key = server_prefix(server.name)
        if key in seen:
            raise ValueError(f"two tool servers are called {server.name!r}")
        seen.add(key)
    return servers


def server_prefix(name: str) -> str:
    """A server's name as it starts its tools' names: letters, digits and ``_`` only."""
    cleaned = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_").lower() or "server"
    return ("_" + cleaned if cleaned[0].isdigit() else cleaned)[:24]


def parse_command_line(line: str) -> tuple[str, tuple[str, ...]]:
    """A command line the user typed, split as a POSIX shell would (no shell runs it)."""
    import shlex

    words = shlex.split(line)
    if not words:
        raise ValueError("the command is empty")
    return words[0], tuple(words[1:])
