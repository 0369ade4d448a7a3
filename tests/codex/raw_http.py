"""Raw HTTP for the tests that watch which stream carries what (seed 004's recipes)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
SSE_ONLY = {"Accept": "text/event-stream"}


async def open_session(
    http: aiohttp.ClientSession, url: str, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """initialize + notifications/initialized; the headers for the session's requests
    (with `extra`, an Authorization say, on every one)."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    async with http.post(url, json=init, headers={**JSON, **(extra or {})}) as response:
        assert response.status == 200, await response.text()
        session = {**JSON, **(extra or {}), "Mcp-Session-Id": response.headers["Mcp-Session-Id"]}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    async with http.post(url, json=initialized, headers=session) as response:
        assert response.status == 202
    return {**session, "MCP-Protocol-Version": "2025-06-18"}


async def next_message(response: aiohttp.ClientResponse, timeout: float) -> Any:
    """The next JSON-RPC message of an SSE stream (comments and empty events skipped);
    None at its end."""
    data: list[str] = []
    while True:
        line = await asyncio.wait_for(response.content.readline(), timeout)
        if not line:
            return None
        text = line.decode().rstrip("\r\n")
        if text.startswith("data:"):
            data.append(text[5:].removeprefix(" "))
        elif not text and data:
            return json.loads("\n".join(data))
        elif not text:
            continue


async def messages_of(response: aiohttp.ClientResponse, timeout: float) -> list[Any]:
    found = []
    while (message := await next_message(response, timeout)) is not None:
        found.append(message)
    return found
