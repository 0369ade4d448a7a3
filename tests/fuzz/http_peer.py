"""A bare HTTP peer for the fuzz tests: sessions, and the messages of a JSON or SSE answer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def open_session(
    http: aiohttp.ClientSession,
    url: str,
    version: str = "2025-06-18",
    capabilities: dict[str, Any] | None = None,
) -> dict[str, str]:
    """initialize + notifications/initialized; the headers for the session's later requests."""
    initialize = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "fuzz", "version": "1"},
        },
    }
    async with http.post(url, json=initialize, headers=HEADERS) as response:
        assert response.status == 200, await response.text()
        session = {
            **HEADERS,
            "Mcp-Session-Id": response.headers["Mcp-Session-Id"],
            "MCP-Protocol-Version": version,
        }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    async with http.post(url, json=initialized, headers=session) as response:
        assert response.status == 202
    return session


async def sse_messages(response: aiohttp.ClientResponse, timeout: float = 10) -> AsyncIterator[Any]:
    """The JSON-RPC messages of an SSE answer as they arrive, to the end of the stream."""
    data: list[bytes] = []
    while True:
        line = await asyncio.wait_for(response.content.readline(), timeout)
        if not line:
            return
        line = line.rstrip(b"\r\n")
        if line.startswith(b"data:"):
            data.append(line[5:].removeprefix(b" "))
        elif not line and data:
            yield orjson.loads(b"\n".join(data))
            data = []


async def messages_of(response: aiohttp.ClientResponse, timeout: float = 10) -> list[Any]:
    """Every message of an answer, JSON (one message or a batch) or SSE, flattened."""
    if response.content_type == "text/event-stream":
        found: list[Any] = []
        async for message in sse_messages(response, timeout):
            found.extend(message if isinstance(message, list) else [message])
        return found
    body = await asyncio.wait_for(response.read(), timeout)
    if not body:
        return []
    decoded = orjson.loads(body)
    return decoded if isinstance(decoded, list) else [decoded]
