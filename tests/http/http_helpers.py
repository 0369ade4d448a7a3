"""Helpers for the HTTP tests: JSON-RPC messages, sessions, and reading SSE incrementally."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from codex_mcp import Context, Server

# Re-exported: the HTTP tests import these from here.
from support.raw_session import HEADERS as JSON  # noqa: F401
from support.raw_session import initialize_request as init  # noqa: F401
from support.raw_session import open_session as open_session

SSE_ONLY = {"Accept": "text/event-stream"}

#: In-process servers only: what a `hold` call with a given tag reports to its test.
_started: dict[str, asyncio.Event] = {}
_release: dict[str, asyncio.Event] = {}


def watch_hold(tag: str) -> tuple[asyncio.Event, asyncio.Event]:
    """(started, release) for the next `hold` call tagged `tag`: the call sets `started`
    when it runs, and returns once the test sets `release`."""
    _started[tag], _release[tag] = asyncio.Event(), asyncio.Event()
    return _started[tag], _release[tag]


def build_test_server() -> Server:
    server = Server("http-tests")

    @server.tool(read_only=True)
    async def echo(message: str) -> str:
        return message

    @server.tool(read_only=True)
    async def progress(steps: int, ctx: Context, delay: float = 0.05, tag: str = "") -> str:
        """One progress notification and one log message per step, tagged."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, message=f"{tag}:{step}")
            await ctx.info(f"{tag}:log{step}")
            await asyncio.sleep(delay)
        return f"done {tag}"

    @server.tool(read_only=True)
    async def wait(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "waited"

    @server.tool(read_only=True)
    async def hold(tag: str) -> str:
        """Tells the test it started (see watch_hold), then waits to be released."""
        _started[tag].set()
        await _release[tag].wait()
        return f"released {tag}"

    return server


def call(
    request_id: Any, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def text_of(reply: dict[str, Any]) -> str:
    return str(reply["result"]["content"][0]["text"])


async def next_event(response: aiohttp.ClientResponse, timeout: float = 5) -> dict[str, str] | None:
    """The next SSE event as {"id", "event", "data", "comment"}; None at the end of the stream.
    A comment (keepalive) counts as an event of its own."""
    fields: dict[str, str] = {}
    while True:
        line = await asyncio.wait_for(response.content.readline(), timeout)
        if not line:
            return fields or None
        text = line.decode().rstrip("\r\n")
        if not text:
            if fields:
                return fields
            continue
        if text.startswith(":"):
            return {"comment": text[1:].strip()}
        name, _, value = text.partition(":")
        fields[name] = value.removeprefix(" ")


async def messages_of(response: aiohttp.ClientResponse, timeout: float = 5) -> list[dict[str, Any]]:
    """Every JSON-RPC message of an SSE response, to the end of the stream."""
    found = []
    while (event := await next_event(response, timeout)) is not None:
        if event.get("data"):
            found.append(json.loads(event["data"]))
    return found
