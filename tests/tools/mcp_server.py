"""A real MCP server for the tests, written with the official SDK and run over stdio.

Its tools cover what a user's server may do: answer (``capital_of``, read-only), change
something (``add_event``: it appends to the file named by ``EVENTS_FILE``), hang
(``sleep_for``), die (``crash``: the process exits mid-call) and answer with junk
(``junk``: an image and a huge text; ``babble``: a line that is not the protocol).
``--http PORT`` serves it on ``http://127.0.0.1:PORT/mcp`` instead of stdio;
``grow`` adds ``extra_tool`` and tells the client its list changed; ``env_var`` reads its
environment. While the file ``MCP_TEST_REFUSE`` names exists, the server will not start
(a server broken since it last ran).
"""

from __future__ import annotations

import base64
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.types import ToolAnnotations

CAPITALS = {"france": "Paris", "japan": "Tokyo", "kenya": "Nairobi", "peru": "Lima"}
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

REFUSE = os.environ.get("MCP_TEST_REFUSE")
if REFUSE and Path(REFUSE).exists():
    print("atlas: my data folder is gone", file=sys.stderr)
    sys.exit(4)

server = MCPServer("atlas")


@server.tool(description="The capital city of a country.",
             annotations=ToolAnnotations(read_only_hint=True))
def capital_of(country: str) -> str:
    return CAPITALS.get(country.strip().lower(), f"I do not know the capital of {country}.")


@server.tool(description="Add an event to the user's calendar.",
             annotations=ToolAnnotations(read_only_hint=False))
def add_event(title: str, day: str) -> str:
    path = Path(os.environ["EVENTS_FILE"])
    with path.open("a", encoding="utf-8") as out:
        out.write(f"{day}: {title}\n")
    return f"Added {title} on {day}."


@server.tool(description="Wait, then answer.", annotations=ToolAnnotations(read_only_hint=True))
def sleep_for(seconds: float) -> str:
    time.sleep(seconds)
    return f"Slept {seconds} s."


@server.tool(description="Stop the server mid-call.")
def crash() -> str:
    sys.stdout.flush()
    os._exit(3)


@server.tool(description="Answer with an image, or with far too much text.",
             annotations=ToolAnnotations(read_only_hint=True))
def junk(kind: str) -> str | Image:
    if kind == "image":
        return Image(data=PIXEL, format="png")
    return "word " * 200_000


@server.tool(description="Write a line that is not JSON-RPC on stdout, then answer.",
             annotations=ToolAnnotations(read_only_hint=True))
def babble() -> str:
    sys.stdout.write("this is not JSON-RPC\n")
    sys.stdout.flush()
    return "still here"


@server.tool(description="An environment variable as the server sees it.",
             annotations=ToolAnnotations(read_only_hint=True))
def env_var(name: str) -> str:
    return os.environ.get(name, "unset")


def extra_tool() -> str:
    return "extra"


@server.tool(description="Offer one more tool from now on.")
async def grow(ctx: Context) -> str:
    server.add_tool(extra_tool, description="Only there after grow.",
                    annotations=ToolAnnotations(read_only_hint=True))
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:  # streamable HTTP on 127.0.0.1:PORT/mcp
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
