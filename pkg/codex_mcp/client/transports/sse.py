"""A server-sent events parser for aiohttp response bodies (the WHATWG event-stream format)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp


@dataclass(slots=True)
class SseEvent:
    event: str
    data: str
    id: str | None
    retry: int | None


async def iter_sse(content: aiohttp.StreamReader) -> AsyncIterator[SseEvent]:
    """Yield each event; events without data are yielded too (empty `data`), since they can
    still carry an id to resume from or a retry delay."""
    data: list[str]
    event, data, last_id, retry, seen = "", [], None, None, False
    while True:
        raw = await content.readline()
        if not raw:
            return  # a half-received event is dropped, as the format says
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not line:
            if seen:
                yield SseEvent(event or "message", "\n".join(data), last_id, retry)
            event, data, retry, seen = "", [], None, False
            continue
        if line.startswith(":"):
            continue  # comment / keep-alive
        seen = True
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry" and value.isdigit():
            retry = int(value)
