"""A raw MCP session over HTTP (initialize + notifications/initialized by hand), for the tests
that look at the wire; over stdio it is `StdioServer.initialize`."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp.test_utils import TestClient

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def initialize_request(
    version: str = "2025-06-18", request_id: Any = 1, capabilities: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The initialize request a bare client sends."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }


async def open_session(
    client: TestClient[Any, Any] | aiohttp.ClientSession,
    url: str = "/mcp",
    version: str = "2025-06-18",
    *,
    capabilities: dict[str, Any] | None = None,
    extra: dict[str, str] | None = None,
    **headers: str,
) -> dict[str, str]:
    """initialize + notifications/initialized; the headers for the session's later requests
    (with `extra`/`headers`, an Authorization say, on every one)."""
    sent = {**HEADERS, **(extra or {}), **headers}
    initialize = initialize_request(version, capabilities=capabilities)
    async with client.post(url, json=initialize, headers=sent) as response:
        assert response.status == 200, await response.text()
        session = {**sent, "Mcp-Session-Id": response.headers["Mcp-Session-Id"]}
    session["MCP-Protocol-Version"] = version
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    async with client.post(url, json=initialized, headers=session) as response:
        assert response.status == 202, await response.text()
    return session
