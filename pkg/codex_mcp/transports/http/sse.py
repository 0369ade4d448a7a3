"""Server-Sent Events framing."""

from __future__ import annotations

SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",  # nginx: don't buffer the stream
    "Connection": "keep-alive",
}

KEEPALIVE = b": keepalive\n\n"


def event(data: bytes, event_id: str | None = None, name: str = "message") -> bytes:
    head = b"id: %s\n" % event_id.encode() if event_id else b""
    # JSON from orjson never contains raw newlines, so one data line is enough.
    return b"%sevent: %s\ndata: %s\n\n" % (head, name.encode(), data)


def retry_hint(milliseconds: int, event_id: str | None = None) -> bytes:
    """A priming event (id, empty data) with a reconnection delay: lets a client resume."""
    head = b"id: %s\n" % event_id.encode() if event_id else b""
    return b"%sretry: %d\ndata: \n\n" % (head, milliseconds)
