"""A test peer built on the official MCP Python SDK (PyPI `mcp`).

    python sdk_server.py stdio
    python sdk_server.py streamable-http PORT   # http://127.0.0.1:PORT/mcp
    python sdk_server.py sse PORT               # http://127.0.0.1:PORT/sse

`slow` appends "started <tag>" and "cancelled <tag>" lines to $EVENTS_FILE, so tests can see
from outside that a timed-out call really was cancelled on the server side.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server import MCPServer

server = MCPServer("sdk-test-server", version="1.2.3")


def _record(line: str) -> None:
    path = os.environ.get("EVENTS_FILE")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


@server.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return message


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def fail(message: str = "boom") -> str:
    """Always fails (an isError result)."""
    raise ValueError(message)


@server.tool()
async def slow(seconds: float, tag: str = "") -> str:
    """Sleep, recording start and cancellation."""
    _record(f"started {tag}")
    try:
        await asyncio.sleep(seconds)
    except BaseException:
        _record(f"cancelled {tag}")
        raise
    return f"slept {seconds}"


@server.resource("test://greeting")
def greeting() -> str:
    return "hello from the sdk"


@server.prompt()
def summarize(text: str) -> str:
    return f"Summarize: {text}"


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "streamable-http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif mode == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        sys.exit(f"unknown mode {mode}")
