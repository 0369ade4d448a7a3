"""Raw HTTP for the tests that watch which stream carries what (seed 004's recipes)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from support.raw_session import open_session as open_session

SSE_ONLY = {"Accept": "text/event-stream"}


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
