"""A bare HTTP peer for the fuzz tests: sessions, and the messages of a JSON or SSE answer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
from support.raw_session import open_session as open_session


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
